package io.mailroom.email.transport.capture;

import io.mailroom.db.jooq.tables.EmailCapture;
import io.mailroom.email.Email;
import io.mailroom.email.transport.smtp.SmtpTransport;
import org.jooq.DSLContext;

import java.util.ArrayList;
import java.util.List;

import static io.mailroom.db.jooq.Tables.EMAIL_CAPTURE;

/** The writes of {@code email_capture}; the reads are {@link CapturedMail}'s. In the caller's transaction. */
final class CaptureStore {

    private static final EmailCapture C = EMAIL_CAPTURE;

    private CaptureStore() {
    }

    /** Inserts or replaces the capture of {@code key}; returns its id (a new one on replace, so the list shows it newest). */
    static long upsert(DSLContext tx, String key, Email email, SmtpTransport.Mime message) {
        String recipients = String.join(", ", recipients(email));
        tx.deleteFrom(C).where(C.IDEMPOTENCY_KEY.eq(key)).execute();
        return tx.insertInto(C)
                .set(C.IDEMPOTENCY_KEY, key)
                .set(C.SENDER, email.from().address())
                .set(C.RECIPIENTS, recipients)
                .set(C.SUBJECT, email.subject())
                .set(C.MESSAGE_ID, message.messageId())
                .set(C.RAW_MIME, message.bytes())
                .returning(C.ID)
                .fetchOne(C.ID);
    }

    /** Every address the message goes to, as support lists them (one today; cc and bcc join here). */
    private static List<String> recipients(Email email) {
        List<String> all = new ArrayList<>();
        all.add(email.to().address());
        return all;
    }
}
