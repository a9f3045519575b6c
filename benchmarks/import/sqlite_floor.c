// The SQLite floor of a bookpipe import: re-inserts the records of an existing library (loaded into
// memory first, column values exactly as stored) into a fresh file with bookpipe's schema and
// procedure, and times each phase. No parsing, normalising or encoding: what is left is what SQLite
// itself costs for these rows.
//
//   cc -O2 -o /tmp/sqlite_floor benchmarks/import/sqlite_floor.c -lsqlite3
//   /tmp/sqlite_floor benchmarks/data/bench-bookpipe.sqlite /tmp/floor.sqlite
//
// Procedure (as LibraryStore does it since schema v3, for a large import into an empty library):
// WAL, 16 KiB pages, synchronous=OFF during the inserts, transactions of 8192 rows, no secondary
// index on records, then synchronous=NORMAL and a FULL checkpoint. Environment overrides for
// experiments: PAGE, SYNC (during the inserts), EXTRA (more SQL run before the inserts),
// INDEXES=1 (the v1 procedure: records_status kept up to date, records_isbn13 and
// records_title_key built at the end with THREADS sorter threads and a CACHE cache),
// DEFER_STATUS=1 (with INDEXES=1: build records_status at the end too).
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COLUMNS 15

typedef struct {
    int type[COLUMNS];
    sqlite3_int64 integer[COLUMNS];
    char *text[COLUMNS];
    int length[COLUMNS];
} Row;

static double wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void run(sqlite3 *db, const char *sql) {
    char *error = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &error) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", sql, error);
        exit(1);
    }
}

static const char *setting(const char *name, const char *fallback) {
    const char *value = getenv(name);
    return value ? value : fallback;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s LIBRARY.sqlite NEW.sqlite\n", argv[0]);
        return 2;
    }
    // Load the records.
    sqlite3 *source;
    if (sqlite3_open_v2(argv[1], &source, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], sqlite3_errmsg(source));
        return 1;
    }
    sqlite3_stmt *query;
    if (sqlite3_prepare_v2(source,
                           "SELECT key, origin, line, raw, fields, normalized, title_key, isbn13, status, "
                           "review_status, findings, enrichment, detection, run_id, updated_at FROM records ORDER BY key",
                           -1, &query, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], sqlite3_errmsg(source));
        return 1;
    }
    size_t capacity = 1 << 20, count = 0;
    Row *rows = malloc(sizeof(Row) * capacity);
    while (sqlite3_step(query) == SQLITE_ROW) {
        if (count == capacity) rows = realloc(rows, sizeof(Row) * (capacity *= 2));
        Row *row = &rows[count++];
        for (int c = 0; c < COLUMNS; c++) {
            row->type[c] = sqlite3_column_type(query, c);
            if (row->type[c] == SQLITE_INTEGER) {
                row->integer[c] = sqlite3_column_int64(query, c);
            } else if (row->type[c] == SQLITE_TEXT) {
                row->length[c] = sqlite3_column_bytes(query, c);
                row->text[c] = malloc(row->length[c] + 1);
                memcpy(row->text[c], sqlite3_column_text(query, c), row->length[c]);
            }
        }
    }
    sqlite3_finalize(query);
    sqlite3_close(source);

    // A fresh library with the same schema.
    sqlite3 *db;
    sqlite3_open(argv[2], &db);
    char sql[512];
    snprintf(sql, sizeof sql, "PRAGMA page_size = %s; PRAGMA journal_mode = WAL; PRAGMA synchronous = %s;",
             setting("PAGE", "16384"), setting("SYNC", "OFF"));
    run(db, sql);
    if (getenv("EXTRA")) run(db, getenv("EXTRA"));
    int indexes = getenv("INDEXES") != NULL;
    run(db, "CREATE TABLE records (key INTEGER PRIMARY KEY, origin INTEGER NOT NULL, line INTEGER NOT NULL, raw TEXT, "
            "fields TEXT NOT NULL, normalized TEXT, title_key TEXT, isbn13 TEXT, status TEXT NOT NULL, "
            "review_status TEXT NOT NULL, findings TEXT, enrichment TEXT, detection TEXT, locked_fields TEXT, "
            "run_id INTEGER, updated_at INTEGER NOT NULL)");
    int deferStatus = getenv("DEFER_STATUS") != NULL;
    if (indexes && !deferStatus) run(db, "CREATE INDEX records_status ON records(status)");
    sqlite3_stmt *insert;
    sqlite3_prepare_v3(db,
                       "INSERT INTO records (key, origin, line, raw, fields, normalized, title_key, isbn13, status, "
                       "review_status, findings, enrichment, detection, run_id, updated_at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO NOTHING",
                       -1, SQLITE_PREPARE_PERSISTENT, &insert, NULL);

    // Inserts, 8192 rows per transaction.
    double wall0 = wall(), cpu0 = cpu();
    run(db, "BEGIN");
    for (size_t index = 0; index < count; index++) {
        Row *row = &rows[index];
        for (int c = 0; c < COLUMNS; c++) {
            if (row->type[c] == SQLITE_INTEGER) {
                sqlite3_bind_int64(insert, c + 1, row->integer[c]);
            } else if (row->type[c] == SQLITE_TEXT) {
                sqlite3_bind_text(insert, c + 1, row->text[c], row->length[c], SQLITE_STATIC);
            } else {
                sqlite3_bind_null(insert, c + 1);
            }
        }
        if (sqlite3_step(insert) != SQLITE_DONE) {
            fprintf(stderr, "%s\n", sqlite3_errmsg(db));
            return 1;
        }
        sqlite3_reset(insert);
        if ((index + 1) % 8192 == 0) {
            run(db, "COMMIT");
            run(db, "BEGIN");
        }
    }
    run(db, "COMMIT");
    double wall1 = wall(), cpu1 = cpu();

    // v1: the deferred indexes. v3: none; synced commits again and a checkpoint that syncs.
    if (indexes) {
        snprintf(sql, sizeof sql,
                 "PRAGMA threads = %s; PRAGMA cache_size = %s; BEGIN; %s"
                 "CREATE INDEX records_isbn13 ON records(isbn13); CREATE INDEX records_title_key ON records(title_key); COMMIT;",
                 setting("THREADS", "1"), setting("CACHE", "-4000"),
                 deferStatus ? "CREATE INDEX records_status ON records(status); " : "");
        run(db, sql);
    } else {
        run(db, "PRAGMA synchronous = NORMAL; PRAGMA wal_checkpoint(FULL);");
    }
    double wall2 = wall(), cpu2 = cpu();
    sqlite3_finalize(insert);
    sqlite3_close(db);  // the last connection checkpoints the WAL
    double wall3 = wall(), cpu3 = cpu();

    printf("rows %zu | inserts %.2f s wall, %.2f s CPU | indexes or checkpoint %.2f s wall, %.2f s CPU | close %.2f s wall | "
           "total %.2f s wall, %.2f s CPU\n",
           count, wall1 - wall0, cpu1 - cpu0, wall2 - wall1, cpu2 - cpu1, wall3 - wall2, wall3 - wall0, cpu3 - cpu0);
    return 0;
}
