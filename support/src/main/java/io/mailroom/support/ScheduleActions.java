package io.mailroom.support;

import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.InvalidEmailException;
import io.mailroom.email.api.SendTime;
import io.mailroom.outbox.admin.MessageActions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Support's reschedule: a waiting (typically scheduled) email is moved to another send time, or to
 * now, until a dispatcher claims it, with the bound and the rule business code meets at enqueue
 * ({@link SendTime}: at most {@link EmailOutbox#DEFAULT_MAX_SEND_AHEAD} ahead, a time past is now).
 * As every support action it locks the row with {@code NOWAIT} through {@link MessageActions} and
 * writes its audit row in the same transaction; a claimed or sent email answers "too late".
 * (Cancel is {@link SupportActions#cancel}.)
 */
final class ScheduleActions {

    private static final Logger log = LoggerFactory.getLogger(ScheduleActions.class);

    /** The request's field with the new send time. */
    static final String SEND_AT = SendTime.FIELD;

    private final MessageActions messageActions;
    private final SupportStore store;
    private final SupportQueries queries;
    private final Clock clock;

    ScheduleActions(MessageActions messageActions, SupportStore store, SupportQueries queries, Clock clock) {
        this.messageActions = messageActions;
        this.store = store;
        this.queries = queries;
        this.clock = clock;
    }

    /**
     * @param sendAt an ISO-8601 instant ({@code 2026-12-24T09:00:00Z}) or date-time with an offset
     *               ({@code 2026-12-24T09:00+07:00}), {@code +2h} (from now), or {@code now}
     */
    ActionResult reschedule(Actor actor, String key, String sendAt, String reason) {
        Roles.require(actor, Role.SUPPORT);
        String k = Params.key(SupportParams.KEY, key);
        String why = Params.reason(SupportParams.REASON, reason, false);
        Instant now = clock.instant();
        Instant requested = sendTime(sendAt, now);
        Instant at;
        try {
            at = new SendTime(clock, EmailOutbox.DEFAULT_MAX_SEND_AHEAD).availableAt(requested);
        } catch (InvalidEmailException e) {
            throw new InvalidParameterException(SEND_AT, e.getMessage());
        }
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("sendAt", at == null ? "now" : at.toString());
        // a time already past is now: MessageActions.reschedule never sets a time before the database's now
        MessageActions.Result r = messageActions.reschedule(k, at == null ? now : at,
                tx -> store.insertAudit(tx, actor, AuditActions.RESCHEDULE, k, why, SupportJson.object(detail)));
        return switch (r) {
            case MessageActions.Result.Applied applied -> {
                log.info("{} on {} by {} ({}): send at {}", AuditActions.RESCHEDULE, k, actor.name(), actor.role().word(),
                        detail.get("sendAt"));
                yield new ActionResult.Applied(AuditActions.RESCHEDULE, queries.email(k).orElse(null), null);
            }
            case MessageActions.Result.Busy busy -> new ActionResult.Busy(k);
            case MessageActions.Result.NotFound nf -> new ActionResult.NotFound(k, nf.why().contains("gone")
                    ? "email " + k + " is finished and its queue entry was removed, so it can no longer be changed"
                    : "no email with key " + k);
            case MessageActions.Result.NotAllowed na -> {
                EmailStatus current = EmailStatus.derive(na.current().sql(), na.current().sql());
                yield new ActionResult.NotAllowed(k, current, "too late to reschedule " + k + ": it is "
                        + current.words().toLowerCase(Locale.ROOT) + "; only a waiting email can be rescheduled");
            }
        };
    }

    private static Instant sendTime(String raw, Instant now) {
        if (raw == null || raw.isBlank()) {
            throw new InvalidParameterException(SEND_AT, SEND_AT + " is required: an ISO-8601 time such as 2026-12-24T09:00:00Z"
                    + " or 2026-12-24T09:00+07:00, +2h from now, or now");
        }
        String v = raw.strip();
        if (v.equalsIgnoreCase("now")) {
            return now;
        }
        if (v.startsWith("+")) {
            return now.plus(Params.duration(SEND_AT, v.substring(1)));
        }
        if (!Character.isDigit(v.charAt(0)) || v.length() < 10) {
            // Params.time also reads "2h" as two hours ago, which would be "now" here: ask for the plain forms
            throw new InvalidParameterException(SEND_AT, SEND_AT + " must be an ISO-8601 time such as 2026-12-24T09:00:00Z"
                    + " or 2026-12-24T09:00+07:00, +2h from now, or now");
        }
        return Params.time(SEND_AT, v, now);
    }
}
