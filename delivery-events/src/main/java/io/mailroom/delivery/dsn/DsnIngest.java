package io.mailroom.delivery.dsn;

import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.webhook.MalformedEventException;
import org.jooq.DSLContext;

import java.util.Objects;
import java.util.function.Function;

/**
 * A delivery status notification from a mail server, parsed and stored in one transaction: the
 * entry point of {@code mailroom dsn ingest} (a mail server's pipe or a file) and of
 * {@code POST /webhooks/dsn}.
 */
public final class DsnIngest {

    public static final String SOURCE = "dsn";

    private final DeliveryEventStore store;
    private final Function<String, String> verpKey;

    public DsnIngest(DeliveryEventStore store) {
        this(store, null);
    }

    /** @param verpKey the idempotency key a VERP return address carries (null if none); null when VERP is off */
    public DsnIngest(DeliveryEventStore store, Function<String, String> verpKey) {
        this.store = Objects.requireNonNull(store, "store");
        this.verpKey = verpKey;
    }

    public record Result(DsnParser.Dsn dsn, DeliveryEventStore.IngestResult stored) {
    }

    /** @throws MalformedEventException before anything is written, when the bytes are not a DSN */
    public Result ingest(DSLContext tx, byte[] raw) throws MalformedEventException {
        return ingest(tx, raw, null);
    }

    /**
     * @param deliveredTo the address the mail server delivered the report to (a VERP address carries the key), or null
     * @throws MalformedEventException before anything is written, when the bytes are not a DSN
     */
    public Result ingest(DSLContext tx, byte[] raw, String deliveredTo) throws MalformedEventException {
        DsnParser.Dsn dsn = DsnParser.parse(raw, verpKey, deliveredTo);
        return new Result(dsn, store.ingest(tx, SOURCE, dsn.deliveryId(), dsn.events()));
    }
}
