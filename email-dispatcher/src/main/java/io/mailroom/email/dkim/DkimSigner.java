package io.mailroom.email.dkim;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.Signature;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Signs a finished message (its bytes as they will be written to the server) with DKIM, RFC 6376,
 * {@code c=relaxed/relaxed}, {@code rsa-sha256} or {@code ed25519-sha256} (RFC 8463), and returns
 * the {@code DKIM-Signature} field(s) to write before it.
 *
 * <p>Signed fields, as RFC 6376 §5.4.1 recommends, each where present: {@link #SIGNED_FIELDS}. A
 * field that occurs n times is listed n times (signed from the bottom up, §5.4.2); From is listed
 * once more than it occurs ("oversigned"), so that a From added in transit breaks the signature
 * instead of being the one a reader sees. No {@code l=} (a body length limit lets anyone append to
 * the body), no {@code i=}, {@code t=} from the clock, no {@code x=}.
 *
 * <p>Why not {@code org.simplejavamail:utils-mail-dkim} 3.2.2 (its rsa-sha256 relaxed/relaxed
 * signatures do verify with dkimpy): it signs only through its own {@code DkimMessage}, a copy of the
 * message, which would lose what {@code KeyedMimeMessage} keeps (the fixed Message-ID on a later
 * save, and noticing when DATA starts, which tells an ambiguous send from a refused one); its header
 * list is a set, so From cannot be oversigned; its {@code t=} is the system clock; its Ed25519 path
 * takes BouncyCastle's key class only (bcprov/bcpkix beside the JDK's own Ed25519); and it brings
 * older Jakarta Mail/Angus versions and two more small libraries. Relaxed canonicalization is short,
 * and the tests check every signature with dkimpy.
 */
public final class DkimSigner {

    /** RFC 6376 §5.4.1's list, in the order they appear in h=. */
    public static final List<String> SIGNED_FIELDS = List.of("From", "Reply-To", "Subject", "Date", "To", "Cc", "Message-ID",
            "In-Reply-To", "References", "MIME-Version", "Content-Type", "Content-Transfer-Encoding",
            "List-Unsubscribe", "List-Unsubscribe-Post", "List-Id");
    private static final String OVERSIGNED = "from";
    private static final int LINE = 76;

    private final DkimSettings settings;
    private final Clock clock;

    public DkimSigner(DkimSettings settings, Clock clock) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    public DkimSettings settings() {
        return settings;
    }

    /**
     * @param fromDomain the domain of the From address, which picks the keys
     * @param message    the whole message, CRLF line ends, as it will be sent
     * @return the DKIM-Signature fields, each ending in CRLF, to write before the message; empty when
     *         no key is configured for that domain
     */
    public String sign(String fromDomain, byte[] message) throws GeneralSecurityException {
        List<DkimKey> keys = settings.keysFor(fromDomain);
        if (keys.isEmpty()) {
            return "";
        }
        int bodyStart = RelaxedCanonicalization.bodyStart(message);
        if (bodyStart < 0) {
            throw new GeneralSecurityException("the message has no empty line between header and body");
        }
        List<RelaxedCanonicalization.Field> fields = RelaxedCanonicalization.fields(message, bodyStart);
        String bodyHash = Base64.getEncoder().encodeToString(
                MessageDigest.getInstance("SHA-256").digest(RelaxedCanonicalization.body(message, bodyStart)));
        long now = clock.instant().getEpochSecond();
        StringBuilder out = new StringBuilder();
        for (DkimKey key : keys) {
            out.append(signature(key, fields, bodyHash, now));
        }
        return out.toString();
    }

    private static String signature(DkimKey key, List<RelaxedCanonicalization.Field> fields, String bodyHash, long now)
            throws GeneralSecurityException {
        List<String> names = new ArrayList<>();
        StringBuilder signedData = new StringBuilder();
        boolean[] used = new boolean[fields.size()];
        for (String wanted : SIGNED_FIELDS) {
            String name = wanted.toLowerCase(Locale.ROOT);
            // bottom-up: the i-th listing of a name takes the i-th instance from the end
            for (int i = fields.size() - 1; i >= 0; i--) {
                if (!used[i] && fields.get(i).name().equalsIgnoreCase(name)) {
                    used[i] = true;
                    names.add(name);
                    signedData.append(RelaxedCanonicalization.header(fields.get(i).raw()));
                }
            }
            if (name.equals(OVERSIGNED)) {
                names.add(name); // a listed name with no instance left signs "no such field" (§5.4.2)
            }
        }
        String head = "DKIM-Signature: v=1; a=" + key.algorithm().tag() + "; c=relaxed/relaxed; d=" + key.domain()
                + "; s=" + key.selector() + ";\r\n\tt=" + now + "; h=" + fold(String.join(":", names), ":") + ";\r\n\tbh="
                + bodyHash + ";\r\n\tb=";
        // the signature covers this field with an empty b=, canonicalized, without its final CRLF (§3.7)
        String self = RelaxedCanonicalization.header(head);
        signedData.append(self, 0, self.length() - 2);
        byte[] data = signedData.toString().getBytes(StandardCharsets.ISO_8859_1);
        Signature signer = Signature.getInstance(key.algorithm().jcaSignature());
        signer.initSign(key.privateKey());
        signer.update(key.algorithm() == DkimAlgorithm.ED25519_SHA256 ? MessageDigest.getInstance("SHA-256").digest(data) : data);
        String b = Base64.getEncoder().encodeToString(signer.sign());
        return head + fold(b, null) + "\r\n";
    }

    /** Folds a long tag value: after a separator ({@code ":"}), or anywhere in base64 (FWS is allowed in it). */
    private static String fold(String value, String separator) {
        StringBuilder out = new StringBuilder(value.length() + 16);
        int lineStart = 0;
        int i = 0;
        while (i < value.length()) {
            int cut;
            if (separator == null) {
                cut = Math.min(value.length(), i + LINE);
            } else {
                int s = value.indexOf(separator, i);
                cut = s < 0 ? value.length() : s + separator.length();
            }
            if (cut - lineStart > LINE && i > lineStart) {
                out.append("\r\n\t ");
                lineStart = i;
            }
            out.append(value, i, cut);
            i = cut;
            if (separator == null && i < value.length()) {
                out.append("\r\n\t ");
                lineStart = i;
            }
        }
        return out.toString();
    }
}
