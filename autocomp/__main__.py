from autocomp.cli import main

main()
