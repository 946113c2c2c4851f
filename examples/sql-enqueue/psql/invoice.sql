-- An invoice from psql: two To, a Cc, a Bcc, tags, the invoice PDF attached and the shop's logo
-- inline (cid:logo), in the business's own transaction (docs/ENQUEUE_SQL.md).
--
--   psql -v invoice_id=102 -v finish=COMMIT   -f invoice.sql    the email exists once this commits
--   psql -v invoice_id=102 -v finish=ROLLBACK -f invoice.sql    nothing is left
--   psql -v invoice_id=102 -v finish=COMMIT -v cc_address=billing@corp -f invoice.sql
--                                        refused: ERROR 22023, COLUMN NAME cc[0].address
--
-- Attachments are base64 in JSON. A client reads the file itself and sends its base64 (psql cannot
-- read a client-side file into a query; pg_read_binary_file reads the server's disk). Here the "PDF"
-- is a literal, encoded with encode(..., 'base64'); the logo is given as bytes in hex.
\set ON_ERROR_STOP on
\if :{?schema}
\else
\set schema mailroom
\endif
\set VERBOSITY verbose
\if :{?cc_address}
\else
\set cc_address billing@corp.example
\endif

BEGIN;
-- ... the business's own writes go here, in the same transaction ...
SELECT :"schema".enqueue_email(
    template        => 'invoice',
    to_address      => NULL,               -- the To are in to_list
    to_list         => json_build_array(json_build_object('address', 'an@example.com', 'name', 'Nguyễn Văn An'),
                                        json_build_object('address', 'binh@example.com')),
    cc              => json_build_array(json_build_object('address', :'cc_address', 'name', 'Billing')),
    bcc             => '[{"address": "audit@shop.example"}]',
    tags            => json_build_object('category', 'invoice', 'invoice', :'invoice_id'),
    attachments     => json_build_array(
                           json_build_object('filename', 'Hóa đơn ' || :'invoice_id' || '.pdf',
                                             'contentType', 'application/pdf',
                                             'content', encode(convert_to('%PDF-1.4' || chr(10) || '% invoice '
                                                                          || :'invoice_id' || chr(10) || '%%EOF', 'UTF8'), 'base64')),
                           json_build_object('filename', 'logo.png', 'contentType', 'image/png', 'contentId', 'logo',
                                             'content', encode('\x89504e470d0a1a0a'::bytea, 'base64'))),
    locale          => 'vi',
    about_type      => 'invoice',
    about_id        => :'invoice_id',
    idempotency_key => 'email-invoice-' || :'invoice_id',
    data            => json_build_object('invoice', json_build_object('id', :'invoice_id', 'total', 535000))
) AS message_id;
:finish;
