"""Parsing SQL with sqlglot; syntax errors name the line and column and say, in SQL terms, what
is wrong.

sqlglot is lenient where the engines are not: it reads ``select a, from t`` (a trailing comma)
and ``from t group`` (a dangling GROUP taken as the alias ``group``) without complaint, and
Spark or DuckDB would then answer a query the user did not write. Both are rejected here, before
the statement is bound.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from cbo.frontend.errors import SqlError, position
from cbo.frontend.languages import DEFAULT, QUERY_DIALECTS, AdjacentStrings, QueryDialect
from cbo.limits import check_statement, check_tokens

DEFAULT_DIALECT = DEFAULT.name
DIALECTS = tuple(QUERY_DIALECTS)

# Tokens a comma may not directly precede: the end of a list.
_LIST_ENDS = {TokenType.FROM: "FROM", TokenType.WHERE: "WHERE", TokenType.GROUP_BY: "GROUP BY",
              TokenType.HAVING: "HAVING", TokenType.ORDER_BY: "ORDER BY", TokenType.LIMIT: "LIMIT",
              TokenType.UNION: "UNION", TokenType.EXCEPT: "EXCEPT", TokenType.INTERSECT: "INTERSECT",
              TokenType.R_PAREN: "')'", TokenType.SEMICOLON: "';'"}

# Reserved words (SQL:2016, and so in Trino, Spark's ANSI mode and PostgreSQL) that start a
# clause. sqlglot reads one left alone (``from t group``) as an alias; no engine does.
_CLAUSE_WORDS = {"group": "GROUP BY needs BY and its columns", "order": "ORDER BY needs BY and its expressions",
                 "where": "WHERE needs a condition", "having": "HAVING needs a condition",
                 "limit": "LIMIT needs a number", "offset": "OFFSET needs a number",
                 "union": "UNION needs a second query", "intersect": "INTERSECT needs a second query",
                 "except": "EXCEPT needs a second query", "window": "WINDOW needs a definition",
                 "select": "SELECT starts a query", "from": "FROM needs a table", "by": "BY follows GROUP or ORDER",
                 "join": "JOIN needs a table", "on": "ON needs a condition", "using": "USING needs columns"}

# What sqlglot's "Required keyword ... missing for <class X>" means, by X, in SQL terms.
_MISSING = {"Where": "WHERE needs a condition", "Having": "HAVING needs a condition",
            "Qualify": "QUALIFY needs a condition", "Order": "ORDER BY needs at least one expression",
            "Group": "GROUP BY needs at least one column", "Limit": "LIMIT needs a number",
            "Offset": "OFFSET needs a number", "Fetch": "FETCH needs a number",
            "Join": "JOIN needs a table", "Not": "NOT needs a condition after it",
            "In": "IN needs a list or a subquery", "Between": "BETWEEN needs a lower and an upper bound",
            "Case": "CASE needs at least one WHEN ... THEN", "If": "WHEN needs a condition and THEN a result",
            "Cast": "CAST needs an expression and a type", "Alias": "AS needs a name",
            "Subquery": "the parentheses need a query", "Paren": "the parentheses need an expression",
            "Exists": "EXISTS needs a subquery", "Union": "UNION needs a second query",
            "Except": "EXCEPT needs a second query", "Intersect": "INTERSECT needs a second query"}

_REQUIRED = re.compile(r"Required keyword: '(\w+)' missing for <class '[\w.]*?(\w+)'>")


@dataclass(frozen=True)
class Parsed:
    """One statement and the tokens it was parsed from (which keep the query's comments)."""

    statement: exp.Expr
    tokens: list[Token]

    def comments(self) -> list[str]:
        """Every comment of the query, in order (sqlglot keeps them on the tokens)."""
        return [c for token in self.tokens for c in token.comments]


def parse(sql: str, dialect: str = DEFAULT_DIALECT) -> exp.Expr:
    """Parse exactly one SELECT statement."""
    return parse_tokens(sql, dialect).statement


def parse_tokens(sql: str, dialect: str = DEFAULT_DIALECT) -> Parsed:
    """Parse exactly one SELECT statement, keeping its tokens. The text is tokenized once: the
    parser, the checks below and the hints (``Parsed.comments``) read the same tokens. Tokenized
    three times, it was a fifth of planning a small TPC-DS query."""
    if dialect not in DIALECTS:
        raise SqlError(f"unknown SQL dialect {dialect!r} (expected one of: {', '.join(DIALECTS)})")
    # A byte-order mark (an editor's UTF-8 signature) is not part of the statement.
    sql = sql.removeprefix("\ufeff")
    try:
        reader = Dialect.get_or_raise(dialect)
        tokens = reader.tokenize(sql)
        check_tokens(tokens)
        statements = [s for s in reader.parser().parse(tokens, sql) if s is not None]
    except ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        highlight = first.get("highlight") or ""
        # sqlglot reports the column where the offending token ends; show where it starts.
        column = (first.get("col") or 0) - max(len(highlight) - 1, 0)
        where = f"line {first.get('line')}, column {column}: " if first.get("line") else ""
        description = first.get("description") or str(exc)
        missing = _REQUIRED.match(description)
        if missing:
            raise SqlError(f"syntax error: {where}{_missing(missing.group(2), highlight)}") from None
        description = description.split("<Token")[0].split(" but got")[0].strip().rstrip(".")
        near = f" near {highlight!r}" if highlight else ""
        raise SqlError(f"syntax error: {where}{description}{near}") from None
    except TokenError as exc:
        raise SqlError(f"syntax error: {exc}") from None
    if not statements:
        raise SqlError("no SQL statement given")
    if len(statements) > 1:
        raise SqlError(f"expected one statement, got {len(statements)}")
    statement = statements[0]
    check_statement(statement, position)
    if not isinstance(statement, exp.Query):
        raise SqlError(f"only queries (SELECT ...) are supported, got {statement.key.upper()}")
    language = QUERY_DIALECTS[dialect]
    if not language.trailing_comma:   # (DuckDB documents a comma before FROM)
        _reject_trailing_commas(tokens)
    _reject_empty_items(tokens)
    _reject_adjacent_strings(sql, tokens, language)
    nodes = _Nodes.of(statement)
    _reject_clause_words_as_aliases(nodes.aliases)
    _reject_empty_lists(nodes, tokens)
    _reject_sampling(nodes.sampled, tokens)
    return Parsed(statement, tokens)


def _missing(node_class: str, highlight: str) -> str:
    if node_class in _MISSING:
        return _MISSING[node_class]
    near = highlight.upper() if highlight else "here"
    # Binary operators (=, <, +, AND, OR, LIKE, ...): the operand after them is what is missing.
    return f"{near} needs an operand after it" if highlight else "the statement is incomplete"


def _at(token: Token) -> str:
    """``line L, column C`` of where a token starts (sqlglot's ``col`` is where it ends)."""
    return f"line {token.line}, column {token.col - len(token.text) + 1}"


def _reject_trailing_commas(tokens: list[Token]) -> None:
    for comma, following in zip(tokens, tokens[1:] + [None]):
        if comma.token_type != TokenType.COMMA:
            continue
        if following is None:
            raise SqlError(f"syntax error: {_at(comma)}: the query ends with a comma")
        if following.token_type in _LIST_ENDS:
            raise SqlError(f"syntax error: {_at(comma)}: a comma before {_LIST_ENDS[following.token_type]}: "
                           "an item of the list is missing (or remove the comma)")


# Tokens after which a comma means an item of a list was left out: ``select , a``,
# ``in (1, , 2)``, ``f(, x)``, ``group by , a``.
_LIST_STARTS = {TokenType.COMMA, TokenType.L_PAREN, TokenType.SELECT, TokenType.DISTINCT, TokenType.GROUP_BY,
                TokenType.ORDER_BY}


def _reject_empty_items(tokens: list[Token]) -> None:
    """sqlglot skips an empty item of a list (``in ('13', , '29')`` parses as a two-item list);
    every engine rejects it."""
    previous_tokens: list[Token | None] = [None, *tokens]
    for previous, comma in zip(previous_tokens, tokens):
        if comma.token_type == TokenType.COMMA and (previous is None or previous.token_type in _LIST_STARTS):
            raise SqlError(f"syntax error: {_at(comma)}: an item of the list is missing before this comma")


def _reject_adjacent_strings(sql: str, tokens: list[Token], language: QueryDialect) -> None:
    """Two string literals in a row, which sqlglot concatenates in every dialect. SQL (and so
    PostgreSQL and DuckDB) joins them only when the space between holds a line break; Trino's
    grammar has no such rule; Spark joins them always."""
    if language.adjacent_strings is AdjacentStrings.JOINED:
        return
    for first, second in zip(tokens, tokens[1:]):
        if first.token_type != TokenType.STRING or second.token_type != TokenType.STRING:
            continue
        if language.adjacent_strings is AdjacentStrings.LINE_BREAK and "\n" in sql[first.end + 1:second.start]:
            continue
        rule = f"in {language.title}'s SQL" if language.adjacent_strings is AdjacentStrings.REFUSED \
            else "without a line break between them"
        line = sql.count("\n", 0, second.start) + 1
        column = second.start - (sql.rfind("\n", 0, second.start) + 1) + 1
        raise SqlError(f"syntax error: line {line}, column {column}: two string literals in a row are not "
                       f"joined {rule} (write 'a' || 'b', or one literal)")


@dataclass
class _Nodes:
    """The nodes the checks below read, gathered in one walk of the statement (each check once
    walked it on its own)."""

    aliases: list[exp.Identifier]    # unquoted identifiers that name an alias
    groups: list[exp.Group]
    selects: list[exp.Select]
    sampled: bool

    @classmethod
    def of(cls, statement: exp.Expr) -> _Nodes:
        nodes = cls([], [], [], False)
        for node in statement.walk():
            if isinstance(node, exp.Identifier):
                parent = node.parent
                if not node.quoted and isinstance(parent, (exp.TableAlias, exp.Alias)) and parent.this is node:
                    nodes.aliases.append(node)
            elif isinstance(node, exp.Group):
                nodes.groups.append(node)
            elif isinstance(node, exp.Select):
                nodes.selects.append(node)
            elif isinstance(node, exp.TableSample):
                nodes.sampled = True
        return nodes


def _reject_clause_words_as_aliases(aliases: list[exp.Identifier]) -> None:
    for identifier in aliases:
        word = identifier.name.lower()
        if word not in _CLAUSE_WORDS:
            continue
        meta = identifier.meta
        where = ""
        if meta.get("line"):
            where = f"line {meta['line']}, column {meta['col'] - len(identifier.name) + 1}: "
        raise SqlError(f"syntax error: {where}{word.upper()} is a reserved word, not an alias: "
                       f"{_CLAUSE_WORDS[word]} (write \"{identifier.name}\" to use it as a name)")


def _reject_sampling(sampled: bool, tokens: list[Token]) -> None:
    """TABLESAMPLE (and DuckDB's USING SAMPLE): sqlglot reads it, but cbo has no sampling
    operator, and dropping it would answer over every row."""
    if not sampled:
        return
    token = next((t for t in tokens if t.token_type == TokenType.TABLE_SAMPLE or t.text.upper() == "SAMPLE"), None)
    where = f"{_at(token)}: " if token else ""
    raise SqlError(f"{where}TABLESAMPLE is not supported: cbo has no sampling operator, and would read every row")


def _reject_empty_lists(nodes: _Nodes, tokens: list[Token]) -> None:
    """``... group by`` with nothing after BY parses as an empty GROUP BY; SELECT without a
    column parses too."""
    for group in nodes.groups:
        if not any(group.args.get(key) for key in group.args):
            token = next((t for t in tokens if t.token_type == TokenType.GROUP_BY), None)
            where = f"{_at(token)}: " if token else ""
            raise SqlError(f"syntax error: {where}GROUP BY needs at least one column")
    for select in nodes.selects:
        if not select.expressions:
            token = next((t for t in tokens if t.token_type == TokenType.SELECT), None)
            where = f"{_at(token)}: " if token else ""
            raise SqlError(f"syntax error: {where}SELECT needs at least one column (or *)")
