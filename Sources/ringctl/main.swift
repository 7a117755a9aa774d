Ringctl.main()
