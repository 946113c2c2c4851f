package io.mailroom.email.api;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.UnaryOperator;

import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * Inputs for {@link EnqueueEmailConformanceTest}, each given both as an {@link OutgoingEmail} and as
 * the arguments of {@code enqueue_email}: a hand-written case on each side of every rule the Java
 * API applies, and a seeded corpus of generated values for the free-text fields.
 */
final class EnqueueEmailCatalogue {

    static final String SQL_CALL = "SELECT enqueue_email(template => ?, to_address => ?, idempotency_key => ?,"
            + " about_type => ?, about_id => ?, data => ?::json, to_name => ?, locale => ?, ordering_key => ?, topic => ?,"
            + " reply_to_address => ?, reply_to_name => ?, headers => ?::json, to_list => ?::json, cc => ?::json,"
            + " bcc => ?::json, tags => ?::json, attachments => ?::json)";

    private static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

    /**
     * One input; {@code data} and {@code headers} are JSON texts, a null field is one not given.
     * {@code expectedField}: the field the Java API must refuse, null where it must accept or where
     * the case was generated.
     */
    record Input(String name, String expectedField, String template, String toAddress, String toName, String locale,
                 String idempotencyKey, String aboutType, String aboutId, String orderingKey, String topic,
                 String replyToAddress, String replyToName, String headers, String data,
                 String toList, String cc, String bcc, String tags, String attachments) {

        Input with(UnaryOperator<Builder> change) {
            return change.apply(new Builder(this)).build();
        }

        OutgoingEmail toJava() {
            OutgoingEmail.Builder b = OutgoingEmail.template(template);
            if (headers != null) {
                parse(headers).forEach((k, v) -> b.header(k, (String) v));
            }
            if (tags != null) {
                parse(tags).forEach((k, v) -> b.tag(k, (String) v));
            }
            if (attachments != null) {
                for (Map<String, Object> a : parseList(attachments)) {
                    String content = (String) a.get("content");
                    byte[] bytes = content == null ? null : Base64.getDecoder().decode(content);
                    if (a.get("contentId") != null) {
                        b.inline((String) a.get("contentId"), (String) a.get("filename"), (String) a.get("contentType"), bytes);
                    } else {
                        b.attach((String) a.get("filename"), (String) a.get("contentType"), bytes);
                    }
                }
            }
            if (toList != null) {
                parseList(toList).forEach(m -> b.to((String) m.get("address"), (String) m.get("name")));
            } else {
                b.to(toAddress, toName);
            }
            if (cc != null) {
                parseList(cc).forEach(m -> b.cc((String) m.get("address"), (String) m.get("name")));
            }
            if (bcc != null) {
                parseList(bcc).forEach(m -> b.bcc((String) m.get("address"), (String) m.get("name")));
            }
            if (locale != null) {
                b.locale(locale);
            }
            if (replyToAddress != null || replyToName != null) {
                b.replyTo(replyToAddress, replyToName);
            }
            b.about(aboutType, aboutId).idempotencyKey(idempotencyKey).orderingKey(orderingKey).topic(topic);
            if (data != null) {
                b.data(parse(data));
            }
            return b.build();
        }

        void bind(PreparedStatement ps) throws SQLException {
            String[] args = {template, toAddress, idempotencyKey, aboutType, aboutId, data, toName, locale, orderingKey, topic,
                    replyToAddress, replyToName, headers, toList, cc, bcc, tags, attachments};
            for (int i = 0; i < args.length; i++) {
                ps.setString(i + 1, args[i]);
            }
        }

        /** Whether the refusal's message is compared too: the inputs that use what issue 27 added. */
        boolean comparesMessage() {
            return toList != null || cc != null || bcc != null || tags != null || attachments != null
                    || (headers != null && headers.toLowerCase(java.util.Locale.ROOT).contains("x-mailroom-tag"));
        }

        @Override
        public String toString() {
            return name + " " + new Builder(this).describe();
        }
    }

    /** Field-by-field copy of an {@link Input}, for cases that differ from the base in one or two fields. */
    static final class Builder {
        String name;
        String expectedField;
        String template;
        String toAddress;
        String toName;
        String locale;
        String idempotencyKey;
        String aboutType;
        String aboutId;
        String orderingKey;
        String topic;
        String replyToAddress;
        String replyToName;
        String headers;
        String data;
        String toList;
        String cc;
        String bcc;
        String tags;
        String attachments;

        Builder(Input i) {
            name = i.name;
            expectedField = i.expectedField;
            template = i.template;
            toAddress = i.toAddress;
            toName = i.toName;
            locale = i.locale;
            idempotencyKey = i.idempotencyKey;
            aboutType = i.aboutType;
            aboutId = i.aboutId;
            orderingKey = i.orderingKey;
            topic = i.topic;
            replyToAddress = i.replyToAddress;
            replyToName = i.replyToName;
            headers = i.headers;
            data = i.data;
            toList = i.toList;
            cc = i.cc;
            bcc = i.bcc;
            tags = i.tags;
            attachments = i.attachments;
        }

        Input build() {
            return new Input(name, expectedField, template, toAddress, toName, locale, idempotencyKey, aboutType, aboutId,
                    orderingKey, topic, replyToAddress, replyToName, headers, data, toList, cc, bcc, tags, attachments);
        }

        String describe() {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("template", template);
            m.put("to_address", toAddress);
            m.put("to_name", toName);
            m.put("locale", locale);
            m.put("idempotency_key", idempotencyKey);
            m.put("about", aboutType + "/" + aboutId);
            m.put("ordering_key", orderingKey);
            m.put("topic", topic);
            m.put("reply_to", replyToAddress + "/" + replyToName);
            m.put("headers", headers);
            m.put("data", data == null || data.length() < 300 ? data : data.substring(0, 300) + "...(" + data.length() + ")");
            m.put("to_list", toList);
            m.put("cc", cc);
            m.put("bcc", bcc);
            m.put("tags", tags);
            m.put("attachments", attachments == null || attachments.length() < 300 ? attachments
                    : attachments.substring(0, 300) + "...(" + attachments.length() + ")");
            m.values().removeIf(v -> v == null || v.equals("null/null"));
            return m.toString();
        }
    }

    static final Input BASE = new Input("base", null, "welcome", "an@example.com", null, null, "email-user-7-welcome", "user",
            "7", null, null, null, null, null, null, null, null, null, null, null);

    private EnqueueEmailCatalogue() {
    }

    static Input good(String name, UnaryOperator<Builder> change) {
        return BASE.with(b -> {
            change.apply(b);
            b.name = name;
            b.expectedField = null;
            return b;
        });
    }

    static Input bad(String name, String field, UnaryOperator<Builder> change) {
        return BASE.with(b -> {
            change.apply(b);
            b.name = name;
            b.expectedField = field;
            return b;
        });
    }

    private static String b64(String s) {
        return Base64.getEncoder().withoutPadding().encodeToString(s.getBytes(UTF_8));
    }

    static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, Object> parse(String json) {
        try {
            return JSON.readValue(json, new TypeReference<LinkedHashMap<String, Object>>() { });
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<Map<String, Object>> parseList(String json) {
        try {
            return JSON.readValue(json, new TypeReference<List<Map<String, Object>>>() { });
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A data object whose envelope is exactly {@code bytes} long, filled with {@code unit} (1 or 2 UTF-8 bytes). */
    private static String dataOfPayload(int bytes, String unit) {
        OutgoingEmail empty = BASE.with(b -> {
            b.data = "{\"s\":\"\"}";
            return b;
        }).toJava();
        int room = bytes - EmailOutbox.envelope(empty).getBytes(UTF_8).length;
        int per = unit.getBytes(UTF_8).length;
        String fill = unit.repeat(room / per) + "x".repeat(room % per);
        return json(Map.of("s", fill));
    }

    static List<Input> handWritten() {
        List<Input> c = new ArrayList<>();
        String emoji = "\uD83D\uDE00";
        c.add(good("minimal", b -> b));
        c.add(good("everything", b -> {
            b.toName = "Nguyễn Văn An";
            b.locale = "vi";
            b.orderingKey = "user-7";
            b.topic = "email.custom";
            b.replyToAddress = "help@shop.example";
            b.replyToName = "Shop help";
            b.headers = "{\"X-Campaign\":\"spring\",\"List-Unsubscribe\":\"<https://shop.example/u?k=1>\",\"List-Id\":\"<news.shop.example>\"}";
            b.data = "{\"order\":{\"id\":\"102\",\"total\":535000.00,\"lines\":[{\"name\":\"Bánh mì \\\"đặc biệt\\\"\\n\",\"qty\":2}],"
                    + "\"paid\":true,\"note\":null,\"big\":12345678901234567890,\"e\":1e3,\"neg\":-0.5}}";
            return b;
        }));
        // addresses (MailboxRules.addressProblem) and Mailbox's strip()
        c.add(good("address stripped", b -> { b.toAddress = " \tan@example.com\u2003"; return b; }));
        c.add(good("address domain kept as given", b -> { b.toAddress = "An.Other+tag@Example.COM"; return b; }));
        c.add(good("address atext", b -> { b.toAddress = "!#$%&'*+/=?^_`{|}~-@example.com"; return b; }));
        c.add(good("address at limits", b -> {
            b.toAddress = "l".repeat(64) + "@" + "d".repeat(63) + "." + "e".repeat(63) + "." + "f".repeat(57) + ".com";
            return b;
        }));
        c.add(bad("address 255", "to.address", b -> {
            b.toAddress = "l".repeat(64) + "@" + "d".repeat(63) + "." + "e".repeat(63) + "." + "f".repeat(58) + ".com";
            return b;
        }));
        for (String a : new String[] {"", "   ", "an", "an@", "@example.com", "a@b@example.com", "an@example", "an@example.123",
                "an@-example.com", "an@example-.com", "an@exa_mple.com", "a..n@example.com", ".an@example.com", "an.@example.com",
                "\"an\"@example.com", "an@example.com\r\nBcc: x@example.net", "ån@example.com", "an@exämple.com", "an@example..com",
                "l".repeat(65) + "@example.com", "an@" + "d".repeat(64) + ".com", "an(c)@example.com", "an@[127.0.0.1]",
                "a n@example.com"}) {
            c.add(bad("address " + a, "to.address", b -> { b.toAddress = a; return b; }));
        }
        c.add(bad("address missing", "to.address", b -> { b.toAddress = null; return b; }));
        // display names (MailboxRules.displayNameProblem, headerTextProblem, EncodedWords)
        for (String n : new String[] {"An", "👩‍👩‍👧 family", "Zoë \"Z\" O'Brien, PhD", "=?UTF-8?B?" + b64("Nguyễn") + "?=",
                "=?ISO-8859-1?Q?Andr=E9?=", "=?iso-8859-1*fr?q?Andr=E9_X?=", "=?windows-1252?Q?=80uro?=", "=?UTF-8?B?" + b64("An") + "=?=",
                "Just =? text ?=", "=?UTF-8?B?" + b64("=?UTF-8?Q?A?=") + "?=", "=?US-ASCII?Q?plain?=", emoji.repeat(200),
                "=?KOI8-R?B?" + Base64.getEncoder().encodeToString(new byte[] {(byte) 0xe1}) + "?=", "a=?UTF-8?Q??=b"}) {
            c.add(good("name " + n, b -> { b.toName = n; return b; }));
        }
        String nested5 = "=?UTF-8?Q?A?=";
        for (int i = 0; i < 5; i++) {
            nested5 = "=?UTF-8?B?" + b64(nested5) + "?=";
        }
        String nested4 = "=?UTF-8?Q?A?=";
        for (int i = 0; i < 3; i++) {
            nested4 = "=?UTF-8?B?" + b64(nested4) + "?=";
        }
        c.add(good("name nested 4 deep", withName(nested4)));
        for (String n : new String[] {"", "   ", "\u2003", "An\u0007", "An\u202Eevil", "A\u2028B", "\u0085An", "An\u061C", "\u2066x",
                "=?UTF-8?B?" + b64("Ann\r\nBcc: evil@example.net") + "?=", "=?UTF-8?Q?A=E2=80=AEb?=", "=?x-unknown?Q?A?=",
                "=?UTF-8?B?Q===?=", "=?UTF-8?B?QQ==QQ==?=", "=?UTF-8?Q?=ZZ?=", "=?UTF-8?Q?=0?=", "=?UTF-8?B?/w?=",
                "=?UTF-8?B?" + b64("=?UTF-8?Q?=0D?=") + "?=", nested5, "x".repeat(201), emoji.repeat(201),
                "=?US-ASCII?Q?=C3=A9?=", "=?windows-1252?Q?=81?=", "=?UTF-8?Q?=00?=", "=?UTF-8?B?" + b64("\u200F") + "?=",
                "=?utf-8?q?=C2=85?="}) {
            c.add(bad("name " + n, "to.name", withName(n)));
        }
        // reply-to
        c.add(good("reply-to address only", b -> { b.replyToAddress = "help@shop.example"; return b; }));
        c.add(bad("reply-to bad address", "replyTo.address", b -> { b.replyToAddress = "help@shop"; return b; }));
        c.add(bad("reply-to name without address", "replyTo.address", b -> { b.replyToName = "Help"; return b; }));
        c.add(bad("reply-to bad name", "replyTo.name", b -> { b.replyToAddress = "h@shop.example"; b.replyToName = "A\rB"; return b; }));
        // template and topic
        c.add(good("template 64", b -> { b.template = "t".repeat(64); return b; }));
        c.add(good("template chars", b -> { b.template = "0rder_shipped.v2-b"; return b; }));
        c.add(good("topic 128", b -> { b.topic = "t".repeat(128); return b; }));
        for (String t : new String[] {"", "Welcome", "-x", "_x", ".x", "t".repeat(65), "wel come", "wélcome", "a/b"}) {
            c.add(bad("template " + t, "template", b -> { b.template = t; return b; }));
        }
        c.add(bad("template missing", "template", b -> { b.template = null; return b; }));
        for (String t : new String[] {"", "Email.x", "t".repeat(129), "email x", "-email"}) {
            c.add(bad("topic " + t, "topic", b -> { b.topic = t; return b; }));
        }
        // locales (java.util.Locale.Builder.setLanguageTag and toLanguageTag)
        for (String l : new String[] {"en", "EN-gb", "vi-VN", "iw", "ji", "in-ID", "zh-yue-HK", "zh-Hant-TW", "es-419", "sl-ROZAJ-biske",
                "de-DE-1996", "en-u-nu-thai-ca-buddhist", "en-u-attr2-attr1-ca-gregory", "en-u-ca-gregory-ca-buddhist",
                "en-u-ca-gregory-nu", "en-b-xx-a-yy", "en-a-xx-a-yy", "EN-Us-t-ZZ-Mx", "en-x-A-b", "i-klingon", "art-lojban",
                "zh-min-nan", "en-GB-oed", "tlh", "qaa", "root", "abcdefgh", "en-US-POSIX", "en-Latn-US-VALENCIA-x-q", "EN-und",
                "und-und-gregory"}) {
            c.add(good("locale " + l, b -> { b.locale = l; return b; }));
        }
        for (String l : new String[] {"", "und", "x-foo", "und-US", "i-enochian", "en_US", "en-", "-en", "en--US", "en-u", "en-x", "123",
                "e", "abcdefghi", "en-abc-def-ghi-jkl", "vi-é", "en-US-u", "en-a-b", "en-US-x-abcdefghi"}) {
            c.add(bad("locale " + l, "locale", b -> { b.locale = l; return b; }));
        }
        // headers
        c.add(good("header 900", b -> { b.headers = json(Map.of("X-Long", "v".repeat(900))); return b; }));
        c.add(good("header X- 76", b -> { b.headers = json(Map.of("X-" + "a".repeat(74), "v")); return b; }));
        c.add(bad("header X- 77", "headers.X-" + "a".repeat(75), b -> { b.headers = json(Map.of("X-" + "a".repeat(75), "v")); return b; }));
        c.add(bad("header Subject", "headers.Subject", b -> { b.headers = "{\"Subject\":\"x\"}"; return b; }));
        c.add(bad("header lower x-", "headers.x-lower", b -> { b.headers = "{\"x-lower\":\"x\"}"; return b; }));
        c.add(bad("header list-id case", "headers.list-id", b -> { b.headers = "{\"list-id\":\"x\"}"; return b; }));
        c.add(bad("header X-", "headers.X-", b -> { b.headers = "{\"X-\":\"x\"}"; return b; }));
        c.add(bad("header empty", "headers.X-A", b -> { b.headers = "{\"X-A\":\"\"}"; return b; }));
        c.add(bad("header blank", "headers.X-A", b -> { b.headers = "{\"X-A\":\"  \"}"; return b; }));
        c.add(bad("header null", "headers.X-A", b -> { b.headers = "{\"X-A\":null}"; return b; }));
        c.add(bad("header non-ASCII", "headers.X-A", b -> { b.headers = "{\"X-A\":\"caf\\u00e9\"}"; return b; }));
        c.add(bad("header line break", "headers.X-A", b -> { b.headers = "{\"X-A\":\"a\\r\\nBcc: x@example.net\"}"; return b; }));
        c.add(bad("header 901", "headers.X-A", b -> { b.headers = json(Map.of("X-A", "v".repeat(901))); return b; }));
        c.add(bad("header encoded CRLF", "headers.X-A", b -> { b.headers = "{\"X-A\":\"=?UTF-8?Q?a=0D=0ABcc:_x?=\"}"; return b; }));
        c.add(bad("header twice", "headers.x-a", b -> { b.headers = "{\"X-A\":\"1\",\"x-a\":\"2\"}"; return b; }));
        // data (Json.write): values, keys, depth, NUL, surrogates, size
        c.add(good("data escapes", b -> {
            b.data = "{\"s\":\"q\\\" b\\\\ n\\n r\\r t\\t b\\b f\\f u\\u0001 \\u001f del\\u007f ls\\u2028 ps\\u2029 é 😀 \\ud83d\\ude00 /\\/\"}";
            return b;
        }));
        c.add(good("data empty", b -> { b.data = "{}"; return b; }));
        c.add(good("data depth 32", b -> { b.data = "{\"a\":".repeat(32) + "1" + "}".repeat(32); return b; }));
        c.add(bad("data depth 33", "data" + ".a".repeat(33), b -> { b.data = "{\"a\":".repeat(33) + "1" + "}".repeat(33); return b; }));
        c.add(bad("data depth 33 in lists", "data.a" + "[0]".repeat(32), b -> { b.data = "{\"a\":" + "[".repeat(32) + "1" + "]".repeat(32) + "}"; return b; }));
        c.add(bad("data NUL", "data.a.b", b -> { b.data = "{\"a\":{\"b\":\"x\\u0000y\"}}"; return b; }));
        c.add(bad("data NUL in list", "data.l[1]", b -> { b.data = "{\"l\":[\"ok\",\"\\u0000\"]}"; return b; }));
        c.add(good("data escaped backslash before u0000 text", b -> { b.data = "{\"a\":\"\\\\u0000\"}"; return b; }));
        c.add(bad("data NUL after escaped backslash", "data.a", b -> { b.data = "{\"a\":\"\\\\\\u0000\"}"; return b; }));
        c.add(bad("data NUL in key", "data.a", b -> { b.data = "{\"a\":{\"k\\u0000\":1}}"; return b; }));
        c.add(bad("data lone high surrogate", "data.s", b -> { b.data = "{\"s\":\"a\\ud800b\"}"; return b; }));
        c.add(bad("data lone low surrogate", "data.s", b -> { b.data = "{\"s\":\"a\\udc00\"}"; return b; }));
        c.add(bad("data reversed pair", "data.s", b -> { b.data = "{\"s\":\"\\ude00\\ud83d\"}"; return b; }));
        c.add(bad("data empty key", "data.a", b -> { b.data = "{\"a\":{\"\":1}}"; return b; }));
        c.add(good("data at the payload limit", b -> { b.data = dataOfPayload(EmailOutbox.DEFAULT_MAX_PAYLOAD_BYTES, "x"); return b; }));
        c.add(bad("data over the payload limit", "data", b -> { b.data = dataOfPayload(EmailOutbox.DEFAULT_MAX_PAYLOAD_BYTES + 1, "x"); return b; }));
        c.add(good("data at the limit in 2-byte chars", b -> { b.data = dataOfPayload(EmailOutbox.DEFAULT_MAX_PAYLOAD_BYTES, "é"); return b; }));
        c.add(bad("data over the limit in 2-byte chars", "data", b -> {
            b.data = dataOfPayload(EmailOutbox.DEFAULT_MAX_PAYLOAD_BYTES + 1, "é");
            return b;
        }));
        c.add(bad("data over the limit by escapes", "data", b -> {
            b.data = json(Map.of("s", "\u0001".repeat(EmailOutbox.DEFAULT_MAX_PAYLOAD_BYTES / 6)));
            return b;
        }));
        // NewMessage's keys
        c.add(good("keys at 200", b -> {
            b.idempotencyKey = "k".repeat(200);
            b.aboutType = "t".repeat(200);
            b.aboutId = "i".repeat(200);
            b.orderingKey = "o".repeat(200);
            return b;
        }));
        c.add(good("key of 100 emoji (200 UTF-16 units)", b -> { b.idempotencyKey = emoji.repeat(100); return b; }));
        c.add(bad("key of 101 emoji", "idempotencyKey", b -> { b.idempotencyKey = emoji.repeat(101); return b; }));
        c.add(good("keys with spaces and bidi", b -> { b.idempotencyKey = " a b \u202E"; return b; }));
        for (String[] k : new String[][] {{"aggregateType"}, {"aggregateId"}, {"idempotencyKey"}, {"orderingKey"}}) {
            for (String v : new String[] {"", "  ", "\u3000", "x".repeat(201), "a\tb", "a\u0085", "a\u007f"}) {
                c.add(bad(k[0] + " " + v, k[0], setKey(k[0], v)));
            }
            if (!k[0].equals("orderingKey")) {
                c.add(bad(k[0] + " missing", k[0], setKey(k[0], null)));
            }
        }
        // several faults: the first the Java API checks is named
        c.add(bad("template before address", "template", b -> { b.template = "X"; b.toAddress = "x"; return b; }));
        c.add(bad("address before name", "to.address", b -> { b.toAddress = "x"; b.toName = "\u0007"; return b; }));
        c.add(bad("locale before address", "locale", b -> { b.locale = "en_US"; b.toAddress = "x"; return b; }));
        c.add(bad("data before keys", "data.a", b -> { b.data = "{\"a\":\"\\u0000\"}"; b.idempotencyKey = ""; return b; }));
        c.add(bad("repeated header before template", "headers.x-a", b -> {
            b.headers = "{\"X-A\":\"1\",\"x-a\":\"2\"}";
            b.template = "X";
            return b;
        }));
        c.add(bad("aggregate type before key", "aggregateType", b -> { b.aboutType = ""; b.idempotencyKey = ""; return b; }));
        c.addAll(EnqueueEmailCatalogueV2.handWritten());
        return c;
    }

    private static UnaryOperator<Builder> withName(String n) {
        return b -> {
            b.toName = n;
            return b;
        };
    }

    private static UnaryOperator<Builder> setKey(String field, String v) {
        return b -> {
            switch (field) {
                case "aggregateType" -> b.aboutType = v;
                case "aggregateId" -> b.aboutId = v;
                case "idempotencyKey" -> b.idempotencyKey = v;
                default -> b.orderingKey = v;
            }
            return b;
        };
    }

    private static final String[] PIECES = {"a", "Z", "0", "9", ".", "-", "_", "@", "example", "com", "..", "=?UTF-8?B?",
            "=?UTF-8?Q?", "=?ISO-8859-1?Q?", "=?utf-8?b?", "?=", "?", "=", "QW5u", "DQo", "4oCu", "=0D", "=E2=80=AE", "=C3=A9", "=E9",
            "=FF", "=8", " ", "\t", "\u202E", "\u200D", "\u200E", "é", "Ễ", "\uD83D\uDE00", "\u0085", "\u007F", "\u2028", "\u3000",
            "x", "u", "ca", "\"", "\\", "<", ">", "!", "~", "(", "[", "\r\n", "\u00A0", "\u2007"};
    private static final String[] SUBTAGS = {"en", "EN", "vi", "zh", "yue", "Latn", "hant", "US", "419", "1996", "rozaj", "u", "ca",
            "gregory", "nu", "thai", "x", "a", "t", "i", "klingon", "und", "abcdefghi", "", "q1", "posix", "iw", "lojban", "art",
            "ab", "abc", "1", "é"};

    /** {@code count} inputs, each the base with one free-text field replaced by a random value from {@code seed}. */
    static List<Input> generated(int count, long seed) {
        Random random = new Random(seed);
        List<Input> inputs = new ArrayList<>(count);
        for (int n = 0; n < count; n++) {
            String text = randomText(random);
            String field = switch (n % 12) {
                case 0 -> "to_address";
                case 1 -> "to_address@";
                case 2 -> "to_name";
                case 3 -> "locale";
                case 4 -> "template";
                case 5 -> "topic";
                case 6 -> "idempotency_key";
                case 7 -> "ordering_key";
                case 8 -> "header";
                case 9 -> "data";
                case 10 -> "encoded_word";
                default -> "reply_to_name";
            };
            String name = "generated " + n + " " + field;
            inputs.add(BASE.with(b -> {
                b.name = name;
                switch (field) {
                    case "to_address" -> b.toAddress = text;
                    case "to_address@" -> b.toAddress = randomText(random) + "@" + text;
                    case "to_name" -> b.toName = text;
                    case "locale" -> {
                        StringBuilder tag = new StringBuilder(SUBTAGS[random.nextInt(SUBTAGS.length)]);
                        for (int i = random.nextInt(5); i > 0; i--) {
                            tag.append('-').append(SUBTAGS[random.nextInt(SUBTAGS.length)]);
                        }
                        b.locale = tag.toString();
                    }
                    case "encoded_word" -> b.toName = randomText(random) + randomEncodedWord(random);
                    case "template" -> b.template = text;
                    case "topic" -> b.topic = text;
                    case "idempotency_key" -> b.idempotencyKey = text;
                    case "ordering_key" -> b.orderingKey = text;
                    case "header" -> b.headers = json(Map.of("X-Gen", text));
                    case "data" -> b.data = json(Map.of("list", List.of(text, Map.of(text.isEmpty() ? "k" : text, 1.5))));
                    default -> {
                        b.replyToAddress = "help@shop.example";
                        b.replyToName = text;
                    }
                }
                return b;
            }));
        }
        return inputs;
    }

    private static final String[] CHARSETS = {"UTF-8", "utf-8", "UTF8", "UTF-8*en", "US-ASCII", "ascii", "ISO-8859-1", "latin1",
            "iso-8859-2", "iso-8859-5", "iso-8859-7", "iso-8859-9", "ISO-8859-15", "windows-1250", "windows-1251", "windows-1252",
            "cp1252", "KOI8-R", "koi8-u", "x-unknown"};
    private static final int[] BYTES = {0x41, 0x62, 0x20, 0x0D, 0x0A, 0x09, 0x00, 0x7F, 0x3D, 0x3F, 0x5F, 0xE2, 0x80, 0xAE, 0x8F,
            0xC3, 0xA9, 0xC2, 0x85, 0xFF, 0x81, 0x90, 0x9D, 0xA4, 0xAA, 0xAE, 0xD2, 0xD8, 0xB7, 0xE1, 0xED, 0xA0, 0xF0, 0x9F, 0x98};

    /** An RFC 2047 encoded word of a few interesting bytes in a random charset and encoding, sometimes malformed. */
    private static String randomEncodedWord(Random random) {
        byte[] bytes = new byte[random.nextInt(6)];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) BYTES[random.nextInt(BYTES.length)];
        }
        String charset = CHARSETS[random.nextInt(CHARSETS.length)];
        StringBuilder text = new StringBuilder();
        if (random.nextBoolean()) {
            String b64 = Base64.getEncoder().encodeToString(bytes);
            text.append(random.nextBoolean() ? b64.replace("=", "") : b64);
            if (random.nextInt(8) == 0) {
                text.append(random.nextBoolean() ? "=" : "A");
            }
            return "=?" + charset + "?" + (random.nextBoolean() ? "B" : "b") + "?" + text + "?=";
        }
        for (byte b : bytes) {
            int v = b & 0xFF;
            if (v == 0x20 && random.nextBoolean()) {
                text.append('_');
            } else if (v > 0x20 && v < 0x7F && v != '=' && v != '?' && v != '_' && random.nextBoolean()) {
                text.append((char) v);
            } else {
                text.append(String.format(random.nextBoolean() ? "=%02X" : "=%02x", v));
            }
        }
        if (random.nextInt(8) == 0) {
            text.append(random.nextBoolean() ? "=4" : "=G1");
        }
        return "=?" + charset + "?" + (random.nextBoolean() ? "Q" : "q") + "?" + text + "?=";
    }

    static String randomText(Random random) {
        StringBuilder s = new StringBuilder();
        for (int i = random.nextInt(9); i > 0; i--) {
            s.append(PIECES[random.nextInt(PIECES.length)]);
        }
        return s.toString();
    }
}
