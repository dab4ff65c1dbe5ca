from gemdoc.shell import main

main()
