from gemdoc.cli import main

main()
