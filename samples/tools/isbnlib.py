"""ISBN helpers shared by the sample and benchmark scripts (stdlib only)."""


def isbn10_check(first9: str) -> str:
    """Check character of an ISBN-10 whose first nine digits are given."""
    total = sum((10 - i) * int(c) for i, c in enumerate(first9))
    r = (11 - total % 11) % 11
    return "X" if r == 10 else str(r)


def isbn13_check(first12: str) -> str:
    """Check digit of an ISBN-13 whose first twelve digits are given."""
    total = sum((1 if i % 2 == 0 else 3) * int(c) for i, c in enumerate(first12))
    return str((10 - total % 10) % 10)


def valid10(s: str) -> bool:
    return (
        len(s) == 10
        and s[:9].isdigit()
        and (s[9].isdigit() or s[9] == "X")
        and isbn10_check(s[:9]) == s[9]
    )


def valid13(s: str) -> bool:
    return len(s) == 13 and s.isdigit() and isbn13_check(s[:12]) == s[12]


def to13(isbn10: str) -> str:
    core = "978" + isbn10[:9]
    return core + isbn13_check(core)


def to10(isbn13: str):
    """ISBN-10 of a 978 ISBN-13, or None for 979 (which has no ISBN-10)."""
    if not isbn13.startswith("978"):
        return None
    core = isbn13[3:12]
    return core + isbn10_check(core)
