"""Errors shared by every package: bad input from the user, reported as one clear line."""


class UserError(Exception):
    """Bad input from the user: printed as one clear line, exit status 2."""
