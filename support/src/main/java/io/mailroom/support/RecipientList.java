package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.db.sql.Redaction;
import io.mailroom.delivery.Addresses;
import io.mailroom.delivery.DeliveryRecipientStates;
import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.email.api.SearchTerms;
import io.mailroom.idempotency.RecordLookup;
import io.mailroom.outbox.admin.EffectHistory;
import org.jooq.DSLContext;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The recipients (To, Cc, Bcc) and tags of the emails on a detail page, each recipient with its own
 * delivery state and suppression. Who they were comes from what the send recorded (the idempotency
 * record's descriptor, {@code recipients}), else from the queued envelope (an email not sent yet, or
 * stopped before its send), else the one recipient the email row knows; the tags from the email's
 * {@code tag:} search terms, which the history keeps as long as the email. A few queries for the
 * page, by primary key or index, each through the owner's read API.
 */
final class RecipientList {

    /** One email's recipients and tags. */
    record Of(List<RecipientView> recipients, Map<String, String> tags) {
    }

    private RecipientList() {
    }

    static Map<String, Of> of(DSLContext tx, List<SupportStore.EmailRow> rows, SuppressionList suppressions) {
        List<String> keys = rows.stream().map(SupportStore.EmailRow::key).toList();
        if (keys.isEmpty()) {
            return Map.of();
        }
        Map<String, RecordLookup.Summary> records = RecordLookup.summaries(tx, keys, List.of("recipients"));
        Map<String, String> payloads = new HashMap<>();
        for (EffectHistory.Effect e : EffectHistory.byKeys(tx, keys)) {
            if (e.live() != null) {
                payloads.put(e.key(), e.live().payload());
            }
        }
        Map<String, List<DeliveryRecipientStates.State>> states = DeliveryRecipientStates.of(tx, keys);
        Map<String, List<String>> terms = EffectHistory.terms(tx, keys);
        Map<String, List<String[]>> listed = new HashMap<>();
        List<String> addresses = new ArrayList<>();
        for (SupportStore.EmailRow row : rows) {
            List<String[]> list = listed(row, records.get(row.key()), payloads.get(row.key()));
            listed.put(row.key(), list);
            list.forEach(r -> addresses.add(normalized(r[1])));
        }
        var active = suppressions.active(tx, addresses.stream().filter(a -> a != null).toList());
        Map<String, Of> out = new HashMap<>();
        for (SupportStore.EmailRow row : rows) {
            Map<String, DeliveryRecipientStates.State> byAddress = new HashMap<>();
            states.getOrDefault(row.key(), List.of()).forEach(s -> byAddress.put(s.address(), s));
            List<RecipientView> views = new ArrayList<>();
            for (String[] r : listed.get(row.key())) {
                String address = normalized(r[1]);
                DeliveryRecipientStates.State s = address == null ? null : byAddress.get(address);
                views.add(new RecipientView(r[0], r[1], r[2], s == null ? null : s.state(), s == null ? null : s.detail(),
                        s == null ? null : s.updatedAt(), address != null && active.containsKey(address)));
            }
            Map<String, String> tags = new LinkedHashMap<>();
            for (String t : terms.getOrDefault(row.key(), List.of())) {
                if (t.startsWith(SearchTerms.TAG + ":") && t.indexOf('=') > 0) {
                    String nv = t.substring(SearchTerms.TAG.length() + 1);
                    tags.put(nv.substring(0, nv.indexOf('=')), nv.substring(nv.indexOf('=') + 1));
                }
            }
            out.put(row.key(), new Of(views, tags));
        }
        return out;
    }

    /** {role, address, name} of each recipient, in To, Cc, Bcc order. */
    private static List<String[]> listed(SupportStore.EmailRow row, RecordLookup.Summary record, String payload) {
        List<String[]> out = new ArrayList<>();
        JsonNode sent = record == null ? null : SupportJson.tree(record.descriptor().get("recipients"));
        if (sent != null && sent.isArray()) {
            sent.forEach(r -> out.add(new String[]{r.path("role").asText("to"), r.path("address").asText(null), r.path("name").asText(null)}));
            return out;
        }
        JsonNode envelope = payload == null ? null : SupportJson.tree(payload);
        if (envelope != null && envelope.path("to").isArray()) {
            for (String role : List.of("to", "cc", "bcc")) {
                envelope.path(role).forEach(m -> out.add(new String[]{role, m.path("address").asText(null), m.path("name").asText(null)}));
            }
            return out;
        }
        String address = SupportViews.firstNonNull(row.descriptorRecipient(), row.payloadEmail());
        if (address != null) {
            out.add(new String[]{"to", address, SupportViews.firstNonNull(row.descriptorName(), row.payloadName())});
        }
        return out;
    }

    private static String normalized(String address) {
        if (address == null || Redaction.isMarker(address)) {
            return null;
        }
        try {
            return Addresses.normalize(address);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
