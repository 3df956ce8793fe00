/* A small SQLite workload: inserts, an index, range queries, an aggregate. */
#include <stdio.h>
#include "sqlite3.h"
int main(void) {
    sqlite3 *db; char *err = 0;
    if (sqlite3_open(":memory:", &db)) return 1;
    sqlite3_exec(db, "CREATE TABLE t(a INTEGER, b TEXT, c REAL);", 0, 0, &err);
    sqlite3_exec(db, "BEGIN;", 0, 0, &err);
    sqlite3_stmt *ins;
    sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?1, printf('row %d', ?1), ?1 * 0.5);", -1, &ins, 0);
    for (int i = 0; i < 20000; i++) {
        sqlite3_bind_int(ins, 1, (i * 7919) % 20000);
        sqlite3_step(ins); sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    sqlite3_exec(db, "COMMIT; CREATE INDEX ta ON t(a);", 0, 0, &err);
    sqlite3_stmt *q;
    sqlite3_prepare_v2(db, "SELECT count(*), sum(c) FROM t WHERE a BETWEEN ?1 AND ?1 + 100 AND b LIKE 'row 1%';", -1, &q, 0);
    double total = 0;
    for (int i = 0; i < 2000; i++) {
        sqlite3_bind_int(q, 1, i * 10);
        while (sqlite3_step(q) == SQLITE_ROW) total += sqlite3_column_double(q, 1);
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    sqlite3_exec(db, "SELECT b, count(*) FROM t GROUP BY a % 97 ORDER BY 2 DESC;", 0, 0, &err);
    printf("%.1f\n", total);
    sqlite3_close(db);
    return 0;
}
