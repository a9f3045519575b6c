import BookpipeLibrary

/// The PostgreSQL library's versioned schema (docs/decisions/0025). Rule, as for SQLite: a
/// migration is never edited once released; a change is a new migration. Applied versions are
/// rows of `schema_migrations`; each migration commits with its row, under a transaction-scoped
/// advisory lock, so processes opening a new library at once apply each migration once.
///
/// Layout: a record is one row of `records`, keyed by its stable id (`<file hash>:<row>`), its
/// whole value as JSON (`data`) beside the columns queries filter and sort on, all written from
/// the same ``BookpipeCore/BookRecord`` in the same statement. Dates the program gives are
/// seconds since 1970 (`float8`, exact round trips); leases are `timestamptz` on the server's clock.
enum PostgresSchema {
    /// A migration: its version (ascending, never reused), a name, and its statements.
    struct Migration {
        var version: Int
        var name: String
        var sql: String
    }

    /// The key of the advisory lock that serialises migrations (any constant shared by all versions).
    static let migrationLock: Int64 = 0x626F_6F6B_7069_7065 // "bookpipe"

    static let migrations: [Migration] = [
        Migration(version: 1, name: "library: files, records, logs, cache, claims", sql: """
            CREATE TABLE runs (
                id bigserial PRIMARY KEY,
                command text NOT NULL,
                pipeline text NOT NULL,
                started_at text NOT NULL,            -- ISO 8601, as the SQLite engine keeps it
                finished_at text,
                status text NOT NULL,                -- running, finished, interrupted, failed
                summary text                         -- JSON
            );
            CREATE TABLE run_sources (
                run_id bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                source text NOT NULL,
                counters text NOT NULL,              -- JSON SourceCounters
                PRIMARY KEY (run_id, source)
            );
            CREATE TABLE source_files (
                id bigserial PRIMARY KEY,            -- import order: the first half of library order
                hash text NOT NULL UNIQUE,
                path text,                           -- NULL for a file whose records came without registering it
                format text,
                header text,                         -- JSON array
                encoding text,
                size bigint,
                rows_total integer,
                first_run_id bigint,
                completed_at text,
                reading text
            );
            CREATE TABLE records (
                id text PRIMARY KEY,                 -- <file hash>:<row>
                file_id bigint NOT NULL REFERENCES source_files(id),
                row integer NOT NULL,
                data text NOT NULL,                  -- JSON BookRecord
                status text NOT NULL,
                review_status text NOT NULL,
                entry text,                          -- list entry: <list> U+001F <key>
                list_name text,
                digest bigint,                       -- ListIdentity.readDigest of what the list gave last
                isbn13 text,
                work_key text,
                edition_key text,
                title_key text NOT NULL,             -- folded, for sorting
                author_key text,
                year integer,
                shelf_key text,
                rating float8,
                search_title text NOT NULL,          -- ' word word ': folded words of the title and its search form
                search_authors text NOT NULL,        -- ' word word ': folded words of the authors (as read and normalised)
                search_isbns text NOT NULL,          -- ' isbn13 isbn13 ': every valid ISBN of the record
                photo text,                          -- a detection's managed photo copy
                locked_fields text NOT NULL DEFAULT '[]', -- JSON array of fields a person locked
                run_id bigint,
                updated_at float8 NOT NULL,
                enriched_at float8,
                retry_at float8,
                queue_time float8 GENERATED ALWAYS AS (coalesce(enriched_at, updated_at)) STORED, -- the claim order
                gone_since float8,                   -- the newest export of its list no longer holds it
                number integer UNIQUE,               -- listing number, never reused (library_counters)
                listed boolean NOT NULL DEFAULT false,
                UNIQUE (file_id, row)
            ) WITH (fillfactor = 80);
            -- The claim query walks these in its order and stops after the rows it takes (0025).
            CREATE INDEX records_queue ON records (status, queue_time, file_id, row);
            CREATE INDEX records_misfiled_work ON records (queue_time, file_id, row)
                WHERE status = 'enriched' AND work_key LIKE '/books/%';
            CREATE INDEX records_entry ON records (list_name) WHERE list_name IS NOT NULL;
            CREATE INDEX records_unlisted ON records (file_id, row) WHERE NOT listed;
            CREATE INDEX records_review_queue ON records (file_id, row)
                WHERE review_status = 'needsReview' OR status = 'needsCandidateSelection';
            CREATE TABLE removed_rows (              -- rows finished without a record: removed records
                file_id bigint NOT NULL REFERENCES source_files(id) ON DELETE CASCADE,
                row integer NOT NULL,
                PRIMARY KEY (file_id, row)
            );
            CREATE TABLE rejected_rows (
                file_hash text NOT NULL,
                line integer NOT NULL,
                row integer,
                column_number integer,
                file text NOT NULL,
                reason text NOT NULL,
                raw_text text NOT NULL,
                run_id bigint,
                PRIMARY KEY (file_hash, line)
            );
            CREATE TABLE library_counters (
                name text PRIMARY KEY,               -- 'listing': the next listing number
                value bigint NOT NULL
            );
            INSERT INTO library_counters (name, value) VALUES ('listing', 1);
            CREATE TABLE record_changes (
                id bigserial PRIMARY KEY,
                record_id text NOT NULL,
                field text NOT NULL,
                old text,
                new text,
                kind text,
                source text,
                run_id bigint,
                changed_at float8 NOT NULL
            );
            CREATE INDEX record_changes_record ON record_changes (record_id);
            CREATE TABLE record_edits (
                record_id text NOT NULL REFERENCES records(id) ON DELETE CASCADE,
                field text NOT NULL,
                value text,
                locked boolean NOT NULL,
                edited_by text NOT NULL,
                edited_at float8 NOT NULL,
                PRIMARY KEY (record_id, field)
            );
            CREATE TABLE review_actions (
                id bigserial PRIMARY KEY,
                record_id text NOT NULL,
                action text NOT NULL,
                before text NOT NULL,
                after text NOT NULL,
                acted_at float8 NOT NULL
            );
            CREATE INDEX review_actions_record ON review_actions (record_id);
            CREATE TABLE record_links (
                first text NOT NULL,
                second text NOT NULL,
                linked boolean NOT NULL,
                decided_at float8 NOT NULL,
                PRIMARY KEY (first, second)
            );
            CREATE TABLE photo_deletions (
                name text PRIMARY KEY,
                attempts integer NOT NULL DEFAULT 0,
                last_error text
            );
            CREATE TABLE lookup_cache (
                source text NOT NULL,
                question text NOT NULL,
                answer text NOT NULL,
                fetched_at float8 NOT NULL,
                PRIMARY KEY (source, question)
            );
            CREATE TABLE host_quotas (
                host text PRIMARY KEY,
                blocked_until float8 NOT NULL,
                reason text NOT NULL
            );
            CREATE TABLE scan_jobs (
                photo_hash text PRIMARY KEY,
                photo text NOT NULL,
                provider text NOT NULL,
                attempt integer NOT NULL,
                phase text NOT NULL,                 -- running, complete, failed
                job_id text,
                books integer,
                failure text,
                job_ms bigint,
                rate_limited integer NOT NULL,
                run_id bigint,
                updated_at float8 NOT NULL
            );
            -- Claims with leases (docs/decisions/0017, 0025): one row per claiming run, its lease on the
            -- server's clock; one row per claimed record, the primary key making one holder per record.
            CREATE TABLE claim_owners (
                owner text PRIMARY KEY,              -- <host>:<pid>:<random>
                host text NOT NULL,
                pid integer NOT NULL,
                command text NOT NULL,
                started_at float8 NOT NULL,
                lease_until timestamptz NOT NULL     -- now() + lease at claim and heartbeat
            );
            CREATE TABLE record_claims (
                record_id text PRIMARY KEY REFERENCES records(id) ON DELETE CASCADE,
                owner text NOT NULL REFERENCES claim_owners(owner) ON DELETE CASCADE,
                token bigint NOT NULL,               -- fencing token: unique per claim taken
                claimed_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE SEQUENCE claim_tokens;
            CREATE INDEX record_claims_owner ON record_claims (owner);
            ALTER TABLE record_claims ADD CONSTRAINT record_claims_token UNIQUE (token);
            """),
        Migration(version: 2, name: "one rate budget per host, on the server's clock", sql: """
            -- A token bucket per host shared by every worker (issue 28 item 3, docs/decisions/0025).
            CREATE TABLE host_buckets (
                host text PRIMARY KEY,
                rate float8 NOT NULL,                -- tokens per second
                burst float8 NOT NULL,               -- the most tokens held
                tokens float8 NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                paused_until timestamptz,            -- a 429's Retry-After or a quota: every worker waits
                pause_reason text
            );
            -- 0: send now (a token was taken); otherwise the seconds to wait before asking again.
            -- Runs under the host's row lock and reads clock_timestamp() after it, so workers on many
            -- machines share the server's clock.
            CREATE FUNCTION take_host_token(p_host text, p_rate float8, p_burst float8) RETURNS float8
            LANGUAGE plpgsql AS $$
            DECLARE
                bucket host_buckets;
                t timestamptz;
                available float8;
            BEGIN
                INSERT INTO host_buckets (host, rate, burst, tokens) VALUES (p_host, p_rate, p_burst, p_burst)
                    ON CONFLICT (host) DO NOTHING;
                SELECT * INTO bucket FROM host_buckets WHERE host = p_host FOR UPDATE;
                t := clock_timestamp();
                available := least(p_burst, bucket.tokens + greatest(0, extract(epoch FROM t - bucket.updated_at)) * p_rate);
                IF bucket.paused_until > t THEN
                    UPDATE host_buckets SET tokens = available, updated_at = t, rate = p_rate, burst = p_burst WHERE host = p_host;
                    RETURN extract(epoch FROM bucket.paused_until - t);
                ELSIF available >= 1 THEN
                    UPDATE host_buckets SET tokens = available - 1, updated_at = t, rate = p_rate, burst = p_burst WHERE host = p_host;
                    RETURN 0;
                ELSE
                    UPDATE host_buckets SET tokens = available, updated_at = t, rate = p_rate, burst = p_burst WHERE host = p_host;
                    RETURN (1 - available) / p_rate;
                END IF;
            END $$;
            """),
        Migration(version: 3, name: "report history", sql: """
            -- Each report's headline figures (issue 27), as the SQLite engine keeps them.
            CREATE TABLE report_history (
                id bigserial PRIMARY KEY,
                generated_at text NOT NULL,          -- ISO 8601, UTC
                scope text NOT NULL,
                figures text NOT NULL                -- JSON object: figure name -> number
            );
            """),
        Migration(version: 4, name: "review decisions that can be undone", sql: """
            -- What undoing a decision puts back, and whether it was undone (issue 26).
            ALTER TABLE review_actions ADD COLUMN restore text;
            ALTER TABLE review_actions ADD COLUMN undone_at float8;
            """),
        Migration(version: 5, name: "search through trigram indexes", sql: """
            -- Search and word queries with PostgreSQL's own means (issue 28 item 6, docs/decisions/0029):
            -- `search_title`, `search_authors` and `search_isbns` hold ' word word ' (folded by our one
            -- rule, the SQLite engine's), matched with LIKE '% word%'; pg_trgm's GIN indexes answer those
            -- without reading the table. pg_trgm is a trusted extension (a database owner may create it;
            -- Debian's postgresql package ships it): where it cannot be created, searches still work,
            -- reading the whole table, and the server's log says why.
            DO $$
            BEGIN
                CREATE EXTENSION IF NOT EXISTS pg_trgm;
            EXCEPTION WHEN OTHERS THEN
                RAISE NOTICE 'pg_trgm could not be created (%): searches read the whole table', SQLERRM;
            END $$;
            DO $$
            BEGIN
                IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
                    CREATE INDEX records_search_title ON records USING gin (search_title gin_trgm_ops);
                    CREATE INDEX records_search_authors ON records USING gin (search_authors gin_trgm_ops);
                    CREATE INDEX records_search_isbns ON records USING gin (search_isbns gin_trgm_ops);
                END IF;
            END $$;
            """),
        Migration(version: 6, name: "one asker per question, on the server's clock", sql: """
            -- A question being asked by some worker (issue 28 item 3: no question asked twice by any
            -- worker, even at the same instant). Rows live as long as a lookup; an expired lease is
            -- taken over (its worker died).
            CREATE TABLE questions_in_flight (
                source text NOT NULL,
                question text NOT NULL,
                asker text NOT NULL,
                lease_until timestamptz NOT NULL,
                PRIMARY KEY (source, question)
            );
            """),
        Migration(version: 7, name: "scan photos in the database", sql: """
            -- Managed copies of scan photos (issue 28 item 5, docs/decisions/0031): written in the
            -- transaction that inserts the detections naming them, deleted in the one that finds them
            -- all reviewed, so every machine reaches them and pg_dump backs them up. A JPEG does not
            -- compress: EXTERNAL keeps it out of line (TOAST) without trying.
            CREATE TABLE photos (
                name text PRIMARY KEY,               -- <SHA-256 of the photo's bytes>.jpg
                byte_count integer NOT NULL,
                stored_at float8 NOT NULL,
                jpeg bytea NOT NULL
            );
            ALTER TABLE photos ALTER COLUMN jpeg SET STORAGE EXTERNAL;
            -- Detections by the copy they name (right(photo, 68) is the name), for the cleanup.
            CREATE INDEX records_photo ON records ((right(photo, 68))) WHERE photo IS NOT NULL;
            """),
        Migration(version: 8, name: "the records each run wrote", sql: """
            -- The report's runs table (issue 27) counts what each run wrote: the records it stored, and
            -- those it took over from another run, as the SQLite engine's run_writes does. Inserts are
            -- counted once per statement from its transition table (the import path stays one
            -- statement per batch); an update that moves a record to another run, once per such row.
            -- Libraries from before start from the records each run wrote last.
            CREATE TABLE run_writes (
                run_id bigint PRIMARY KEY,           -- runs.id
                records bigint NOT NULL
            );
            INSERT INTO run_writes (run_id, records)
                SELECT run_id, count(*) FROM records WHERE run_id IS NOT NULL GROUP BY run_id;
            CREATE FUNCTION run_writes_count_inserts() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO run_writes (run_id, records)
                    SELECT run_id, count(*) FROM inserted WHERE run_id IS NOT NULL GROUP BY run_id
                    ON CONFLICT (run_id) DO UPDATE SET records = run_writes.records + excluded.records;
                RETURN NULL;
            END $$;
            CREATE TRIGGER run_writes_on_insert AFTER INSERT ON records REFERENCING NEW TABLE AS inserted
                FOR EACH STATEMENT EXECUTE FUNCTION run_writes_count_inserts();
            CREATE FUNCTION run_writes_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO run_writes (run_id, records) VALUES (NEW.run_id, 1)
                    ON CONFLICT (run_id) DO UPDATE SET records = run_writes.records + 1;
                RETURN NULL;
            END $$;
            CREATE TRIGGER run_writes_on_update AFTER UPDATE OF run_id ON records FOR EACH ROW
                WHEN (NEW.run_id IS NOT NULL AND NEW.run_id IS DISTINCT FROM OLD.run_id)
                EXECUTE FUNCTION run_writes_count_update();
            """),
        Migration(version: 9, name: "the claim queue in a narrow table, so a record's update is HOT", sql: """
            -- An enrichment save changes a record's status, queue time, review status, work key and
            -- listed flag. While indexes of `records` covered them (the queue, the misfiled work keys,
            -- the review queue, the unlisted records), no save was a HOT update: each inserted into
            -- every index of `records`, three GIN trigram indexes among them (docs/decisions/0037,
            -- "Session 18"). These columns stay in `records` (every read of them is unchanged), and a
            -- copy of them lives in `record_queue`, kept by triggers on `records` (every writer of
            -- them is covered), which holds the indexes the claim, the review queue and the listing
            -- walk. pg_dump creates triggers after the data, so a restore loads both tables as dumped.
            CREATE TABLE record_queue (
                id text PRIMARY KEY,                 -- records.id
                file_id bigint NOT NULL,
                row integer NOT NULL,
                status text NOT NULL,
                review_status text NOT NULL,
                queue_time float8 NOT NULL,
                retry_at float8,
                work_key text,
                listed boolean NOT NULL
            );
            INSERT INTO record_queue (id, file_id, row, status, review_status, queue_time, retry_at, work_key, listed)
                SELECT id, file_id, row, status, review_status, queue_time, retry_at, work_key, listed FROM records;
            CREATE INDEX record_queue_order ON record_queue (status, queue_time, file_id, row);
            CREATE INDEX record_queue_misfiled_work ON record_queue (queue_time, file_id, row)
                WHERE status = 'enriched' AND work_key LIKE '/books/%';
            CREATE INDEX record_queue_review ON record_queue (file_id, row)
                WHERE review_status = 'needsReview' OR status = 'needsCandidateSelection';
            CREATE INDEX record_queue_unlisted ON record_queue (file_id, row) WHERE NOT listed;
            -- A HOT update also needs room for the new version on the record's page: an imported
            -- record takes about 1.1 kB and grows to 1.6 kB when enriched, and a save writes 25
            -- neighbours at once, so at fillfactor 80 only a quarter of the saves were HOT (24,626 of
            -- 100,000), at 45 most of them (86,197). The pages already written keep their fill.
            ALTER TABLE records SET (fillfactor = 45);
            DROP INDEX records_queue;
            DROP INDEX records_misfiled_work;
            DROP INDEX records_review_queue;
            DROP INDEX records_unlisted;
            CREATE FUNCTION record_queue_insert() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO record_queue (id, file_id, row, status, review_status, queue_time, retry_at, work_key, listed)
                    SELECT id, file_id, row, status, review_status, queue_time, retry_at, work_key, listed FROM inserted;
                RETURN NULL;
            END $$;
            CREATE TRIGGER record_queue_on_insert AFTER INSERT ON records REFERENCING NEW TABLE AS inserted
                FOR EACH STATEMENT EXECUTE FUNCTION record_queue_insert();
            -- The rows are found by key (`= ANY(ARRAY(…))`, an index condition), whatever the plan
            -- cached for the first statement of a session made of the transition table's size; rows
            -- whose queue columns did not change are left alone.
            CREATE FUNCTION record_queue_update() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE record_queue q SET file_id = u.file_id, row = u.row, status = u.status,
                    review_status = u.review_status, queue_time = u.queue_time, retry_at = u.retry_at,
                    work_key = u.work_key, listed = u.listed
                FROM updated u
                WHERE q.id = ANY(ARRAY(SELECT id FROM updated)) AND q.id = u.id
                    AND (q.file_id, q.row, q.status, q.review_status, q.queue_time, q.retry_at, q.work_key, q.listed)
                        IS DISTINCT FROM
                        (u.file_id, u.row, u.status, u.review_status, u.queue_time, u.retry_at, u.work_key, u.listed);
                RETURN NULL;
            END $$;
            CREATE TRIGGER record_queue_on_update AFTER UPDATE ON records REFERENCING NEW TABLE AS updated
                FOR EACH STATEMENT EXECUTE FUNCTION record_queue_update();
            CREATE FUNCTION record_queue_delete() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                DELETE FROM record_queue q WHERE q.id = ANY(ARRAY(SELECT id FROM deleted));
                RETURN NULL;
            END $$;
            CREATE TRIGGER record_queue_on_delete AFTER DELETE ON records REFERENCING OLD TABLE AS deleted
                FOR EACH STATEMENT EXECUTE FUNCTION record_queue_delete();
            -- A library's records get statistics at once; a new library's empty table gets none (an
            -- ANALYZE of no rows made the planner take the table for a small one all through the first
            -- import and enrichment: the claim sorted every candidate, 26 ms a claim at 100,000 rows).
            DO $$
            BEGIN
                IF EXISTS (SELECT 1 FROM record_queue) THEN ANALYZE record_queue; END IF;
            END $$;
            """),
        Migration(version: 10, name: "claims without per-row checks", sql: """
            -- A claim inserts one row a record taken, and each row paid for three things no reader needs
            -- (docs/decisions/0037, session 18): the UNIQUE index on the fencing token, which comes from a
            -- sequence and is never looked up, and two foreign-key checks (a query a row, locking the record
            -- and the owner again) that the claim makes true itself: it locks the record and upserts its
            -- owner in the same transaction before it inserts the claim, and nothing else inserts claims.
            -- What the keys did besides is kept by two triggers: a deleted record or owner takes its claims
            -- with it, row by row and at the end of the statement, as ON DELETE CASCADE did.
            ALTER TABLE record_claims DROP CONSTRAINT record_claims_token;
            ALTER TABLE record_claims DROP CONSTRAINT record_claims_record_id_fkey;
            ALTER TABLE record_claims DROP CONSTRAINT record_claims_owner_fkey;
            CREATE FUNCTION record_claims_of_deleted_record() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                DELETE FROM record_claims WHERE record_id = OLD.id;
                RETURN NULL;
            END $$;
            CREATE TRIGGER record_claims_on_record_delete AFTER DELETE ON records FOR EACH ROW
                EXECUTE FUNCTION record_claims_of_deleted_record();
            CREATE FUNCTION record_claims_of_deleted_owner() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                DELETE FROM record_claims WHERE owner = OLD.owner;
                RETURN NULL;
            END $$;
            CREATE TRIGGER record_claims_on_owner_delete AFTER DELETE ON claim_owners FOR EACH ROW
                EXECUTE FUNCTION record_claims_of_deleted_owner();
            """),
    ]
}
