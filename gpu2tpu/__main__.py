from gpu2tpu.cli import main

raise SystemExit(main())
