from dbio.cli import main

main()
