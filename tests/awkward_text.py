"""Awkward identifiers and strings for the literal fuzz tests against real servers
(``tests/integration/test_postgres_literals.py``, ``test_mariadb_literals.py``): one definition,
each server's limits given by its test."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

# Quotes of every kind, backslash, LIKE's wildcards, whitespace, accents, a CJK character and one
# outside the Basic Multilingual Plane.
AWKWARD = "'\"`\\%_ \t\nabcABCxyz01éü€中🙂"
# Identifier characters: quotes, backslash, wildcards, a space, 2- and 3-byte characters.
IDENTIFIER_ALPHABET = "abcxyz_ '\"`\\%é€中"


def awkward_text(identifier_alphabet: str = IDENTIFIER_ALPHABET, identifier_max: int = 20,
                 alphabet: str = AWKWARD, short_max: int = 12, any_max: int = 40,
                 long_sizes: tuple[int, int] = (500, 3000), excluded: str = "\x00",
                 reserved: tuple[str, ...] = ("k",)) -> tuple[SearchStrategy[str], SearchStrategy[str]]:
    """(identifiers, strings) for a server's limits.

    Identifiers: 1 to ``identifier_max`` characters of ``identifier_alphabet``, lower case (both
    servers fold or compare names without case), no trailing space (MariaDB drops it), none of
    ``reserved`` (the test table's other columns). Strings: short ones of ``alphabet``, any
    unicode text of up to ``any_max`` characters without surrogates or ``excluded`` (PostgreSQL
    text holds no NUL), and one character of ``alphabet`` repeated ``long_sizes`` times."""
    identifiers = st.text(alphabet=st.sampled_from(identifier_alphabet), min_size=1, max_size=identifier_max) \
        .filter(lambda s: s == s.rstrip() and s.lower() == s and s not in reserved)
    strings = st.one_of(st.text(alphabet=st.sampled_from(alphabet), max_size=short_max),
                        st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=excluded),
                                max_size=any_max),
                        st.builds(lambda c, n: c * n, st.sampled_from(alphabet), st.integers(*long_sizes)))
    return identifiers, strings
