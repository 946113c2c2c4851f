package io.mailroom.email.api;

import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static io.mailroom.email.api.EnqueueEmailCatalogue.bad;
import static io.mailroom.email.api.EnqueueEmailCatalogue.good;
import static io.mailroom.email.api.EnqueueEmailCatalogue.json;
import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * The inputs of {@link EnqueueEmailConformanceTest} for what issue 27 added to an email (several To,
 * Cc, Bcc, tags, attachments): a case on each side of every rule of {@link RecipientRules},
 * {@link io.mailroom.mailbox.TagRules}, {@link AttachmentRules} and the default {@link AttachmentLimits},
 * the order in which they are checked, the version 2 envelope at the payload limit, and a seeded corpus.
 */
final class EnqueueEmailCatalogueV2 {

    static final String PDF = "%PDF-1.4\n% Hóa đơn 102\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n";
    static final byte[] PNG = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R', 0, 0, 0, 1};

    private EnqueueEmailCatalogueV2() {
    }

    static String mailboxes(String... addressAndName) {
        List<Map<String, Object>> list = new ArrayList<>();
        for (int i = 0; i < addressAndName.length; i += 2) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("address", addressAndName[i]);
            if (addressAndName[i + 1] != null) {
                m.put("name", addressAndName[i + 1]);
            }
            list.add(m);
        }
        return json(list);
    }

    static String many(String prefix, int count) {
        return json(IntStream.range(0, count).mapToObj(i -> Map.of("address", prefix + i + "@example.com")).toList());
    }

    static Map<String, Object> file(String filename, String contentType, byte[] content, String contentId) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("filename", filename);
        m.put("contentType", contentType);
        m.put("content", content == null ? null : Base64.getEncoder().encodeToString(content));
        if (contentId != null) {
            m.put("contentId", contentId);
        }
        return m;
    }

    static String files(Map<?, ?>... files) {
        return json(List.of(files));
    }

    static String one(String filename, String contentType, String contentId) {
        return files(file(filename, contentType, PDF.getBytes(UTF_8), contentId));
    }

    static String tags(String... nameAndValue) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < nameAndValue.length; i += 2) {
            m.put(nameAndValue[i], nameAndValue[i + 1]);
        }
        return json(m);
    }

    private static UnaryOperator<EnqueueEmailCatalogue.Builder> toList(String list) {
        return b -> {
            b.toAddress = null;
            b.toName = null;
            b.toList = list;
            return b;
        };
    }

    /** A data object that makes the envelope of {@code base} (a version 2 email) exactly {@code bytes} long. */
    private static String dataOfPayload(EnqueueEmailCatalogue.Input base, int bytes) {
        OutgoingEmail empty = base.with(b -> {
            b.data = "{\"s\":\"\"}";
            return b;
        }).toJava();
        int room = bytes - EmailOutbox.envelope(empty).getBytes(UTF_8).length;
        return json(Map.of("s", "é".repeat(room / 2) + "x".repeat(room % 2)));
    }

    static List<EnqueueEmailCatalogue.Input> handWritten() {
        List<EnqueueEmailCatalogue.Input> c = new ArrayList<>();
        String emoji = "\uD83D\uDE00";
        byte[] pdf = PDF.getBytes(UTF_8);
        // accepted: the envelope (v1 when nothing new is used), terms and attachment rows
        c.add(good("v2 to list of one is v1", toList(mailboxes(" An@Example.com ", "Nguyễn Văn An"))));
        c.add(good("v2 several to", toList(mailboxes("an@example.com", "An", "binh@corp.example", null))));
        c.add(good("v2 cc only", b -> { b.cc = mailboxes("billing@corp.example", "Billing"); return b; }));
        c.add(good("v2 bcc only, headers", b -> {
            b.bcc = mailboxes("audit@shop.example", null);
            b.headers = "{\"X-Campaign\":\"spring\"}";
            return b;
        }));
        c.add(good("v2 empty cc and bcc lists are v1", b -> { b.cc = "[]"; b.bcc = "[]"; return b; }));
        c.add(good("v2 tags only", b -> { b.tags = tags("category", "invoice", "plan", "pro-2026"); return b; }));
        c.add(good("v2 attachment only", b -> { b.attachments = one("invoice.pdf", "application/pdf", null); return b; }));
        EnqueueEmailCatalogue.Input invoice = good("v2 everything: invoice with a PDF and an inline logo", b -> {
            b.toAddress = null;
            b.toList = mailboxes("an@example.com", "Nguyễn Văn An", "Binh@Corp.Example", "Trần \"Bình\"");
            b.cc = mailboxes("billing@corp.example", "Billing", " accounts@corp.example\t", null);
            b.bcc = mailboxes("audit@shop.example", null);
            b.tags = tags("category", "invoice", "customer", "c-102", "path", "a/b:c@d.e_f");
            b.attachments = files(file("Hóa đơn 102.pdf", "application/pdf", pdf, null),
                    file("logo.png", "image/png", PNG, "logo@shop.example"),
                    file("copy of invoice.pdf", "application/pdf", pdf, null));
            b.locale = "vi";
            b.replyToAddress = "help@shop.example";
            b.replyToName = "Shop help";
            b.headers = "{\"X-Campaign\":\"spring\",\"List-Id\":\"<news.shop.example>\"}";
            b.orderingKey = "invoice-102";
            b.data = "{\"invoice\":{\"id\":\"102\",\"total\":535000.00,\"lines\":[{\"name\":\"Bánh mì\",\"qty\":2}]}}";
            return b;
        });
        c.add(invoice);
        c.add(good("v2 to 50 and cc 50", b -> {
            b.toAddress = null;
            b.toList = many("to", 50);
            b.cc = many("cc", 50);
            return b;
        }));
        c.add(good("v2 tags 10, name 64, value 256", b -> {
            List<String> t = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                t.add("t" + i);
                t.add("v" + i);
            }
            t.addAll(List.of("n".repeat(64), "x", "long", "v".repeat(256)));
            b.tags = tags(t.toArray(String[]::new));
            return b;
        }));
        c.add(good("v2 attachment names and types at limits", b -> {
            b.attachments = files(file("f".repeat(251) + ".pdf", "a".repeat(127) + "/" + "b".repeat(127), pdf, null),
                    file(emoji + " ảnh.png", "image/png", PNG, "c".repeat(100)),
                    file("quote\"semi;colon.txt", "text/plain", "hi".getBytes(UTF_8), "A.b_c@d+e-f"));
            return b;
        }));
        // the same size both sides: the envelope's bytes as Java counts them, attachments' entries included
        for (int extra : new int[] {0, 1}) {
            c.add(invoice.with(b -> {
                b.name = "v2 invoice at the payload limit + " + extra;
                b.expectedField = extra == 0 ? null : "data";
                b.data = dataOfPayload(invoice, EmailOutbox.DEFAULT_MAX_PAYLOAD_BYTES + extra);
                return b;
            }));
        }
        // recipients (RecipientRules)
        c.add(bad("v2 to list empty", "to", toList("[]")));
        c.add(bad("v2 to 51", "to", toList(many("to", 51))));
        c.add(bad("v2 cc 51", "cc", b -> { b.cc = many("cc", 51); return b; }));
        c.add(bad("v2 bcc 51", "bcc", b -> { b.bcc = many("bcc", 51); return b; }));
        c.add(bad("v2 101 in all", "to", b -> { b.cc = many("cc", 50); b.bcc = many("bcc", 50); return b; }));
        c.add(bad("v2 to[1].address", "to[1].address", toList(mailboxes("an@example.com", null, "binh@corp", null))));
        c.add(bad("v2 to[0].name", "to[0].name", toList(mailboxes("an@example.com", "A\u202Eb", "binh@corp.example", null))));
        c.add(bad("v2 sole to in a list keeps to.address", "to.address", toList(mailboxes("an@", null))));
        c.add(bad("v2 cc[1].address", "cc[1].address", b -> { b.cc = mailboxes("c@corp.example", null, "x y@corp.example", null); return b; }));
        c.add(bad("v2 cc[0].name", "cc[0].name", b -> { b.cc = mailboxes("c@corp.example", "   ", "d@corp.example", null); return b; }));
        c.add(bad("v2 cc address missing", "cc[0].address", b -> { b.cc = "[{\"name\":\"Billing\"}]"; return b; }));
        c.add(bad("v2 bcc[0].address", "bcc[0].address", b -> { b.bcc = mailboxes("audit@[127.0.0.1]", null); return b; }));
        c.add(bad("v2 cc repeats the to", "cc[0].address", b -> { b.cc = mailboxes(" AN@example.COM", null); return b; }));
        c.add(bad("v2 cc repeats itself", "cc[1].address", b -> {
            b.cc = mailboxes("c@corp.example", null, "C@corp.example", null);
            return b;
        }));
        c.add(bad("v2 bcc repeats to[1]", "bcc[0].address", b -> {
            b.toAddress = null;
            b.toList = mailboxes("an@example.com", null, "binh@corp.example", null);
            b.bcc = mailboxes("Binh@corp.example", null);
            return b;
        }));
        // tags (TagRules)
        c.add(bad("v2 11 tags", "tags", b -> {
            b.tags = json(IntStream.range(0, 11).boxed().collect(Collectors.toMap(i -> "t" + i, i -> "v", (x, y) -> x,
                    LinkedHashMap::new)));
            return b;
        }));
        c.add(bad("v2 tag name 65", "tags", b -> { b.tags = tags("n".repeat(65), "v"); return b; }));
        c.add(bad("v2 tag name empty", "tags", b -> { b.tags = tags("", "v"); return b; }));
        c.add(bad("v2 tag name with a space", "tags", b -> { b.tags = tags("my tag", "v"); return b; }));
        c.add(bad("v2 tag name with a control", "tags", b -> { b.tags = tags("a\u0001\u007f", "v"); return b; }));
        c.add(bad("v2 tag name long and non-ASCII", "tags", b -> { b.tags = tags(emoji.repeat(50) + "é".repeat(50), "v"); return b; }));
        c.add(bad("v2 tag name reserved", "tags", b -> { b.tags = tags("idempotency_key", "v"); return b; }));
        c.add(bad("v2 tag name twice", "tags.Plan", b -> { b.tags = "{\"plan\":\"a\",\"Plan\":\"b\"}"; return b; }));
        c.add(bad("v2 tag value null", "tags.plan", b -> { b.tags = "{\"plan\":null}"; return b; }));
        c.add(bad("v2 tag value empty", "tags.plan", b -> { b.tags = tags("plan", ""); return b; }));
        c.add(bad("v2 tag value 257", "tags.plan", b -> { b.tags = tags("plan", "v".repeat(257)); return b; }));
        c.add(bad("v2 tag value of 129 emoji", "tags.plan", b -> { b.tags = tags("plan", emoji.repeat(129)); return b; }));
        c.add(bad("v2 tag value with a space", "tags.plan", b -> { b.tags = tags("plan", "pro plus"); return b; }));
        c.add(bad("v2 tag value with =", "tags.plan", b -> { b.tags = tags("plan", "a=b"); return b; }));
        c.add(bad("v2 tag value non-ASCII", "tags.plan", b -> { b.tags = tags("plan", "é"); return b; }));
        c.add(bad("v2 header with an emoji", "headers.X-A", b -> {
            b.headers = json(Map.of("X-A", "ok " + emoji));
            b.cc = mailboxes("c@corp.example", null);
            return b;
        }));
        c.add(bad("v2 header X-Mailroom-Tag", "headers.X-MAILROOM-TAG", b -> { b.headers = "{\"X-MAILROOM-TAG\":\"a=b\"}"; return b; }));
        // attachments (AttachmentRules, then the default AttachmentLimits)
        for (String[] f : new String[][] {{"", "missing"}, {"  ", "blank"}, {"f".repeat(256), "256"}, {" a.pdf", "leading space"},
                {"a.pdf\u2003", "trailing em space"}, {".", "dot"}, {"..", "dots"}, {"a/b.pdf", "slash"}, {"a\\b.pdf", "backslash"},
                {"a\u0001b", "control"}, {"é\u0085", "C1 control"}, {"a\u2028b", "line separator"}, {emoji + "x/y", "index after an emoji"},
                {"a\tb", "tab"}}) {
            c.add(bad("v2 filename " + f[1], "attachments[0].filename", b -> { b.attachments = one(f[0], "application/pdf", null); return b; }));
        }
        c.add(bad("v2 filename absent", "attachments[0].filename", b -> { b.attachments = one(null, "application/pdf", null); return b; }));
        c.add(good("v2 filename with inner spaces", b -> { b.attachments = one("a b\u00a0c.pdf", "application/pdf", null); return b; }));
        for (String t : new String[] {"", "pdf", "application/pdf; charset=x", "application/", "/pdf", "application/pdf/x",
                "a".repeat(128) + "/b", "ap plication/pdf", "application/pdé"}) {
            c.add(bad("v2 content type " + t, "attachments[0].contentType", b -> { b.attachments = one("a.pdf", t, null); return b; }));
        }
        c.add(bad("v2 content type absent", "attachments[0].contentType", b -> { b.attachments = one("a.pdf", null, null); return b; }));
        c.add(bad("v2 content type multipart", "attachments[0].contentType", b -> { b.attachments = one("a", "multipart/mixed", null); return b; }));
        c.add(bad("v2 content type Message", "attachments[0].contentType", b -> { b.attachments = one("a", "Message/rfc822", null); return b; }));
        c.add(good("v2 content type chars", b -> { b.attachments = one("a", "application/vnd.a+b!#$&^_-x", null); return b; }));
        for (String id : new String[] {"", "-logo", "lo go", "logo<1>", "c".repeat(101), "lögo"}) {
            c.add(bad("v2 content id " + id, "attachments[0].contentId", b -> { b.attachments = one("a.png", "image/png", id); return b; }));
        }
        c.add(bad("v2 content id twice", "attachments[1].contentId", b -> {
            b.attachments = files(file("a.png", "image/png", PNG, "Logo"), file("b.png", "image/png", PNG, "logo"));
            return b;
        }));
        c.add(bad("v2 content missing", "attachments[1].content", b -> {
            b.attachments = files(file("a.png", "image/png", PNG, null), file("b.png", "image/png", null, null));
            return b;
        }));
        c.add(bad("v2 content empty", "attachments[0].content", b -> {
            b.attachments = files(file("a.png", "image/png", new byte[0], null));
            return b;
        }));
        c.add(bad("v2 100 attachments", "attachments", b -> {
            b.attachments = json(IntStream.range(0, 100).mapToObj(i -> file("f" + i, "text/plain", new byte[] {1}, null)).toList());
            return b;
        }));
        c.add(bad("v2 11 attachments", "attachments", b -> {
            b.attachments = json(IntStream.range(0, 11).mapToObj(i -> file("f" + i, "text/plain", new byte[] {1}, null)).toList());
            return b;
        }));
        c.add(good("v2 10 attachments", b -> {
            b.attachments = json(IntStream.range(0, 10).mapToObj(i -> file("f" + i, "text/plain", new byte[] {(byte) i}, null)).toList());
            return b;
        }));
        byte[] tenMiB = new byte[AttachmentLimits.DEFAULT_MAX_BYTES_EACH];
        c.add(bad("v2 attachment over 10 MiB", "attachments[1].content", b -> {
            b.attachments = files(file("a", "text/plain", PNG, null),
                    file("big.bin", "application/octet-stream", java.util.Arrays.copyOf(tenMiB, tenMiB.length + 1), null));
            return b;
        }));
        c.add(bad("v2 attachments over 20 MiB together", "attachments", b -> {
            b.attachments = files(file("a.bin", "application/octet-stream", tenMiB, null),
                    file("b.bin", "application/octet-stream", tenMiB, null), file("c", "text/plain", new byte[] {1}, null));
            return b;
        }));
        // several faults: the first the Java API checks is named
        c.add(bad("v2 repeated tag before template", "tags.A", b -> { b.tags = "{\"a\":\"1\",\"A\":\"2\"}"; b.template = "X"; return b; }));
        c.add(bad("v2 missing content before template", "attachments[0].content", b -> {
            b.attachments = files(file("a", "text/plain", null, null));
            b.template = "X";
            return b;
        }));
        c.add(bad("v2 locale before recipients", "locale", b -> { b.locale = "en_US"; b.cc = mailboxes("x", null); return b; }));
        c.add(bad("v2 counts before addresses", "cc", b -> { b.toAddress = "x"; b.cc = many("cc", 51); return b; }));
        c.add(bad("v2 recipients before tags", "bcc[0].address", b -> { b.bcc = mailboxes("x", null); b.tags = tags("a b", "v"); return b; }));
        c.add(bad("v2 tags before reply-to", "tags.a", b -> { b.tags = tags("a", ""); b.replyToAddress = "x"; return b; }));
        c.add(bad("v2 headers before attachments", "headers.Subject", b -> {
            b.headers = "{\"Subject\":\"x\"}";
            b.attachments = one("", "application/pdf", null);
            return b;
        }));
        c.add(bad("v2 attachment rules before limits", "attachments[10].filename", b -> {
            b.attachments = json(IntStream.range(0, 11).mapToObj(i -> file(i == 10 ? "/" : "f" + i, "text/plain", new byte[] {1}, null))
                    .toList());
            return b;
        }));
        c.add(bad("v2 attachments before data", "attachments[0].contentType", b -> {
            b.attachments = one("a", "multipart/x", null);
            b.data = "{\"a\":\"\\u0000\"}";
            return b;
        }));
        return c;
    }

    private static final String[] PIECES = {"a", "Z", "0", "-", "_", ".", ":", "@", "/", "=", " ", "é", "\uD83D\uDE00", "+", "\"",
            "\\", "\u0001", "\u0085", "\u2028", "\u00a0", "\u2003", "\t", "example", "com", "..", "<", ">", "x", "multipart", "message"};

    /** {@code count} inputs, each with one value of a new field replaced by random text. */
    static List<EnqueueEmailCatalogue.Input> generated(int count, long seed) {
        Random random = new Random(seed);
        List<EnqueueEmailCatalogue.Input> inputs = new ArrayList<>(count);
        for (int n = 0; n < count; n++) {
            StringBuilder t = new StringBuilder();
            for (int i = random.nextInt(7); i > 0; i--) {
                t.append(PIECES[random.nextInt(PIECES.length)]);
            }
            String text = t.toString();
            String field = switch (n % 8) {
                case 0 -> "cc address";
                case 1 -> "bcc name";
                case 2 -> "to[1] address";
                case 3 -> "tag name";
                case 4 -> "tag value";
                case 5 -> "filename";
                case 6 -> "content type";
                default -> "content id";
            };
            inputs.add(good("generated v2 " + n + " " + field, b -> {
                switch (field) {
                    case "cc address" -> b.cc = mailboxes(text + "@" + EnqueueEmailCatalogue.randomText(random), null);
                    case "bcc name" -> b.bcc = mailboxes("audit@shop.example", text);
                    case "to[1] address" -> {
                        b.toAddress = null;
                        b.toList = mailboxes("an@example.com", null, text + "@corp.example", null);
                    }
                    case "tag name" -> b.tags = tags(text, "v");
                    case "tag value" -> b.tags = tags("t", text);
                    case "filename" -> b.attachments = one(text, "text/plain", null);
                    case "content type" -> b.attachments = one("a", text + "/" + PIECES[random.nextInt(PIECES.length)], null);
                    default -> b.attachments = one("a.png", "image/png", text);
                }
                return b;
            }));
        }
        return inputs;
    }
}
