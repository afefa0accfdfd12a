from cora_ci.cli import main

main()
