package io.mailroom.outbox;

import java.util.Locale;

/**
 * Where the dispatcher's session settings (READ COMMITTED, {@code statement_timeout},
 * {@code idle_in_transaction_session_timeout}) are made. A transaction-mode pooler (PgBouncer
 * {@code pool_mode = transaction}) hands each transaction whichever server session is free, so a
 * setting made once per client session lands on one server session and is missing on the others,
 * and leaks into other clients' transactions there.
 */
public enum SessionSettings {
    /** Once per physical session, the first time the runtime sees it: a direct connection (the default). */
    SESSION,
    /**
     * At the start of every transaction, as {@code SET LOCAL} (and {@code SET TRANSACTION}): safe
     * behind a transaction-mode pooler; costs one round trip per transaction (BEGIN and the settings
     * go together, before the transaction's first statement).
     */
    TRANSACTION,
    /**
     * Mailroom sets nothing: the role or database carries the settings
     * ({@code ALTER ROLE mailroom SET statement_timeout = '10s'}), which every server session gets at
     * login, whichever pooler is in front; no per-transaction cost.
     */
    SERVER;

    /** Parses {@code session}, {@code transaction} or {@code server}, naming {@code setting} when it is none of them. */
    public static SessionSettings parse(String setting, String value) {
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(setting + " must be 'session', 'transaction' or 'server', got '" + value + "'");
        }
    }
}
