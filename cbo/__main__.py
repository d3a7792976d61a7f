from cbo.app.cli import main

raise SystemExit(main())
