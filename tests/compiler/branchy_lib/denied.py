"""A module the test's deny list names: its branch on data is refused, not converted."""


def positive_part(x):
    if x.sum() > 0:
        return x * 2.0
    return -x
