"""Proving a load on InnoDB: rows, keys, one row per leaf page (InnoDB's own statistics, at every
page size), the scattered index, varied rows."""

from __future__ import annotations

import numpy as np

from dbio.engines.base import Check, SetupRecord
from dbio.engines.mysql import catalog, sqlfiles
from dbio.engines.mysql.connection import Connection

SAMPLE_ROWS = 10000


def verify(conn: Connection, record: SetupRecord) -> list[Check]:
    checks: list[Check] = []
    spec = record.spec
    if record.status != "ready":
        checks.append(Check("setup complete", False, f"status is {record.status}: the load was interrupted"))
    page_size = int(conn.one_row("SELECT @@innodb_page_size")[0])
    tables = catalog.dbio_tables(conn)
    for i in range(1, spec.schemas + 1):
        checks += _verify_table(conn, tables, catalog.data_table(i), spec.scale, spec.key_order, page_size,
                                indexed=True)
    if spec.scan_table_blocks:
        checks += _verify_table(conn, tables, catalog.SCAN_TABLE, spec.scan_table_blocks, "contiguous", page_size,
                                indexed=False)
    return checks


def _verify_table(conn: Connection, tables: dict[str, str], name: str, expected: int, key_order: str,
                  page_size: int, *, indexed: bool) -> list[Check]:
    if name not in tables:
        return [Check(f"{name} exists", False, "missing: run dbio setup")]
    table = sqlfiles.ident(name)
    rows, lo, hi, distinct = conn.one_row(
        f"SELECT COUNT(*), MIN(custid), MAX(custid), COUNT(DISTINCT custid) FROM {table}")
    checks = [Check(f"{name} rows", rows == expected, f"{rows} rows (expected {expected})"),
              Check(f"{name} keys 1..{expected}", lo == 1 and hi == expected and distinct == rows,
                    f"keys {lo}..{hi}, {distinct} distinct")]
    checks.append(_pages_check(conn, name, rows, page_size))
    sample = conn.one_row(f"SELECT COUNT(*), COUNT(DISTINCT MD5(filler)), MIN(LENGTH(filler)) FROM "
                          f"(SELECT filler FROM {table} LIMIT 1000) s")
    checks.append(Check(f"{name} rows varied", sample[0] == sample[1],
                        f"{sample[1]} distinct fillers of {sample[2]} bytes in {sample[0]} sampled rows"))
    if indexed:
        entries = conn.one_row(f"SELECT COUNT(*) FROM {table} FORCE INDEX (custid) WHERE custid >= 1")[0]
        checks.append(Check(f"{name} index", entries == rows, f"{entries} entries for {rows} rows"))
        corr = _key_correlation(conn, table)
        if key_order == "random":
            checks.append(Check(f"{name} keys scattered", corr is not None and abs(corr) < 0.1,
                                f"key/page-order correlation {_fmt(corr)} (random order: near 0)"))
        else:
            checks.append(Check(f"{name} keys contiguous", corr is not None and corr > 0.9,
                                f"key/page-order correlation {_fmt(corr)} (contiguous order: near 1)"))
    return checks


def _pages_check(conn: Connection, name: str, rows: int, page_size: int) -> Check:
    """Leaf pages of the clustered index from InnoDB's persistent statistics, after ANALYZE TABLE.
    n_leaf_pages counts the leaf segment's pages; a partly used last extent can add a few."""
    what = f"{name} 1 row per {page_size // 1024} KiB page"
    conn.query(f"ANALYZE TABLE {sqlfiles.ident(name)}")
    try:
        row = conn.one("SELECT stat_value FROM mysql.innodb_index_stats WHERE database_name = DATABASE() "
                       "AND table_name = %s AND index_name = 'PRIMARY' AND stat_name = 'n_leaf_pages'", (name,))
    except Exception as exc:  # no SELECT on the mysql schema
        return Check(what, False, f"cannot read mysql.innodb_index_stats ({exc.args[-1]}): grant SELECT on it to prove "
                                  "it")
    leaf = int(row[0]) if row else 0
    ok = row is not None and leaf_pages_fit(rows, leaf)
    return Check(what, ok, f"{rows} rows in {leaf} leaf pages (InnoDB's statistics; each row's partner was deleted "
                 "after the load and MERGE_THRESHOLD keeps the pages apart)")


def leaf_pages_fit(rows: int, leaf: int) -> bool:
    """A page per row (fewer pages: some hold two), and no more than a partly used last extent's
    pages besides (pure)."""
    return rows <= leaf <= rows + max(64, rows // 50)


def _key_correlation(conn: Connection, table: str) -> float | None:
    """Correlation of the key with the physical (clustered) order, on the first rows."""
    pairs = conn.query(f"SELECT id, custid FROM {table} ORDER BY id LIMIT {SAMPLE_ROWS}")
    if len(pairs) < 3:
        return None
    data = np.asarray(pairs, dtype=np.float64)
    if data[:, 1].std() == 0:
        return None
    return float(np.corrcoef(data[:, 0], data[:, 1])[0, 1])


def _fmt(value: float | None) -> str:
    return "unknown" if value is None else f"{value:+.3f}"
