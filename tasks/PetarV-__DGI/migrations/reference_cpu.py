"""The least edit that runs the original on the CPU: the linear-probe evaluation after training
calls .cuda() unconditionally (three calls); they are dropped. Nothing else changes."""

EXEC = "execute.py"


def apply(r):
    for line in ("tot = tot.cuda()", "log.cuda()", "best_acc = best_acc.cuda()"):
        r.replace(EXEC, line, "pass")
