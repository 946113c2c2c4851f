package io.mailroom.delivery.dsn;

import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.webhook.MalformedEventException;
import org.jooq.DSLContext;

import java.util.Objects;

/**
 * A delivery status notification from a mail server, parsed and stored in one transaction: the
 * entry point of {@code mailroom dsn ingest} (a mail server's pipe or a file) and of
 * {@code POST /webhooks/dsn}.
 */
public final class DsnIngest {

    public static final String SOURCE = "dsn";

    private final DeliveryEventStore store;

    public DsnIngest(DeliveryEventStore store) {
        this.store = Objects.requireNonNull(store, "store");
    }

    public record Result(DsnParser.Dsn dsn, DeliveryEventStore.IngestResult stored) {
    }

    /** @throws MalformedEventException before anything is written, when the bytes are not a DSN */
    public Result ingest(DSLContext tx, byte[] raw) throws MalformedEventException {
        DsnParser.Dsn dsn = DsnParser.parse(raw);
        return new Result(dsn, store.ingest(tx, SOURCE, dsn.deliveryId(), dsn.events()));
    }
}
