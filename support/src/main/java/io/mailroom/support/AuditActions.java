package io.mailroom.support;

/** The {@code audit_log.action} values this module writes. */
public final class AuditActions {

    public static final String RETRY = "retry";
    /** On the email that was resent; the detail names the new key. */
    public static final String RESEND = "resend";
    /** Shown on the new email of a resend (derived from the {@link #RESEND} row, not stored twice). */
    public static final String RESEND_CREATED = "resend_created";
    public static final String CONFIRM_SENT = "confirm_sent";
    public static final String CANCEL = "cancel";
    /** A waiting email moved to another send time; the detail has {@code sendAt} (an instant, or now). */
    public static final String RESCHEDULE = "reschedule";
    /** A failed email, or one in review, closed as won't send; the detail has {@code from}, {@code to} and the delivery record. */
    public static final String CLOSE = "close";
    public static final String PAUSE = "pause";
    /** An address erased (right to erasure): one entry for the whole, with its id and the address's keyed hash. */
    public static final String ERASURE = "erasure";
    /** One email touched by an erasure; the detail names the erasure and whether the email was sent to the address. */
    public static final String ERASE = "erase";
    public static final String RESUME = "resume";
    /** A bulk action's own entry: {@code bulk_retry}, {@code bulk_close}, {@code bulk_resend}, {@code bulk_lift_suppression}. */
    public static final String BULK_PREFIX = "bulk_";
    /** A bulk action lifted an email's recipient's suppressions (the suppression list audits the lift itself). */
    public static final String LIFT_SUPPRESSION = "lift_suppression";

    private AuditActions() {
    }
}
