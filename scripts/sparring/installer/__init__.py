"""install.py's parts, one module per concern.

install.py runs before any runtime exists: these modules use the standard library only, and
syntax of Python 3.10 (install.py checks the version before it imports them).
"""
