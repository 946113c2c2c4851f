// A Node business writes its own row and enqueues the email about it in ONE transaction with
// Mailroom's SQL function enqueue_email: the email exists exactly when the business change commits.
//
//   DATABASE_URL=postgres://app@localhost/shop node enqueue.js commit   <user-id> <email>
//   DATABASE_URL=postgres://app@localhost/shop node enqueue.js rollback <user-id> <email>
//
// MAILROOM_SCHEMA names the schema Mailroom was migrated into (unset: found on the search_path).
// Prints {"messageId":..., "committed":...}; a refused email exits with 2 and prints the field
// (SQLSTATE 22023, the field in the error's column), a duplicate idempotency key exits with 3.
'use strict';

const { Client } = require('pg');

async function main([mode, userId, address]) {
  if (!['commit', 'rollback'].includes(mode) || !userId || address === undefined) {
    console.error('usage: node enqueue.js commit|rollback <user-id> <email>');
    return 64;
  }
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  const schema = process.env.MAILROOM_SCHEMA;
  const fn = schema ? `${client.escapeIdentifier(schema)}.enqueue_email` : 'enqueue_email';
  try {
    await client.query('BEGIN');
    // ... the business's own writes go here, in the same transaction ...
    const { rows } = await client.query(
      `SELECT ${fn}(template => $1, to_address => $2, to_name => $3, locale => $4,
                    about_type => 'user', about_id => $5, idempotency_key => $6,
                    ordering_key => $7, data => $8) AS message_id`,
      ['welcome', address, 'Nguyễn Văn An', 'vi', userId, `email-user-${userId}-welcome`, `user-${userId}`,
       { user: { id: userId, plan: 'pro', trialDays: 14 } }]);
    await client.query(mode === 'commit' ? 'COMMIT' : 'ROLLBACK');
    console.log(JSON.stringify({ messageId: rows[0].message_id, committed: mode === 'commit' }));
    return 0;
  } catch (err) {
    await client.query('ROLLBACK');
    if (err.code === '22023') { // refused: err.column names the field, err.message says why
      console.log(JSON.stringify({ refused: err.column, message: err.message }));
      return 2;
    }
    if (err.code === '23505' && err.constraint === 'outbox_effect_pkey') { // this email was enqueued before
      console.log(JSON.stringify({ duplicate: `email-user-${userId}-welcome` }));
      return 3;
    }
    throw err;
  } finally {
    await client.end();
  }
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (err) => {
  console.error(err);
  process.exitCode = 1;
});
