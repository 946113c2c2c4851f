-- The rendering of every email (V7) is written once per send inside the reservation's transaction,
-- and its HTML part (a few KiB with the CSS inlined) is compressed inline by PostgreSQL on the way
-- in. lz4 compresses several times faster than the default pglz for about the same size on this
-- kind of text, so the parts of new rows are compressed with lz4 (rows already stored keep pglz;
-- both are read the same way). See BENCHMARKS.md, "Issue 28: the rendering row".
--
-- lz4 exists only in servers built with it (--with-lz4: PGDG's and Debian's packages, the official
-- images). A server without it keeps pglz: the columns' setting is a storage detail, never needed
-- for correctness, so its absence (feature_not_supported, 0A000) is not a reason to refuse the schema.
DO $$
BEGIN
    ALTER TABLE email_rendering
        ALTER COLUMN text_part SET COMPRESSION lz4,
        ALTER COLUMN html_part SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available in this server: email_rendering keeps pglz';
END
$$;
