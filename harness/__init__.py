"""Front ends and engines: evaluate, validate, report, the local and Ray engines, the reference
store. Never keyed: an edit here voids no record."""
