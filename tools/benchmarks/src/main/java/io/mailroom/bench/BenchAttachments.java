package io.mailroom.bench;

import io.mailroom.email.api.OutgoingEmail;

import java.util.SplittableRandom;

/**
 * The dispatcher-only scenario's emails with an attachment (issue 27, {@code --dispatch-attachment-kib}):
 * each gets one "invoice" of its own random bytes, as an invoice's content is its own (and random
 * bytes are stored uncompressed, as a PDF's mostly are).
 */
final class BenchAttachments {

    private BenchAttachments() {
    }

    static OutgoingEmail withInvoice(OutgoingEmail e, long seq, int bytes) {
        byte[] pdf = new byte[bytes];
        new SplittableRandom(seq).nextBytes(pdf);
        return OutgoingEmail.template(e.template()).to(e.to().address(), e.to().name()).locale(e.locale().toLanguageTag())
                .about(e.aggregateType(), e.aggregateId()).idempotencyKey(e.idempotencyKey()).data(e.data())
                .attach("Hóa đơn " + e.aggregateId() + ".pdf", "application/pdf", pdf).build();
    }
}
