"""Broken: the gold, except that --device defaults to the CPU: the whole run trains on the host
(exit 0, no error)."""


def apply(r):
    r.apply_gold(without=[("exe_physio.py",
                           "parser.add_argument('--device', default='cuda:0', help='Device for Attack')")])
    r.replace("exe_physio.py", "parser.add_argument('--device', default='cuda:0', help='Device for Attack')",
              "parser.add_argument('--device', default='cpu', help='Device for Attack')")
