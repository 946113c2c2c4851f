package io.mailroom.support;

/**
 * The answer to an applied action (API and CLI).
 *
 * @param action the audit action: retry, resend, confirm_sent, cancel
 * @param key    the email acted on
 * @param newKey for a resend: the new email's key
 * @param email  the email acted on, as it is now
 */
public record ActionAnswer(String action, String key, String newKey, EmailView email) {

    public static ActionAnswer of(ActionResult.Applied a, String key) {
        return new ActionAnswer(a.action(), key, a.newKey(), a.email());
    }
}
