from cbo.cli import main

raise SystemExit(main())
