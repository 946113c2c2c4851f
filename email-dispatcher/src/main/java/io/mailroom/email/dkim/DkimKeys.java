package io.mailroom.email.dkim;

import io.mailroom.outbox.InvalidSettingException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.UnrecoverableKeyException;
import java.security.cert.Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads DKIM private keys when the configuration is built, so that a key that cannot be used (a
 * missing file, another format, a wrong password, an RSA key where ed25519 was configured) stops
 * start-up naming the setting and the file, instead of failing every send later.
 *
 * <p>Two sources: a PEM file holding an unencrypted PKCS#8 key ({@code -----BEGIN PRIVATE KEY-----},
 * what {@code openssl genpkey} writes), or a PKCS#12 keystore ({@code .p12} or {@code .pfx}) whose
 * entry is chosen by {@code #alias} after the file name, or is the store's only key entry.
 */
public final class DkimKeys {

    private static final Pattern PEM = Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*)-----END \\1-----");
    private static final int MAX_KEY_FILE_BYTES = 1 << 20;

    private DkimKeys() {
    }

    /**
     * @param setting  the variable that named the file, for messages ({@code MAILROOM_DKIM_KEYS})
     * @param file     a PEM file, or a keystore ending {@code .p12}/{@code .pfx}, optionally followed by {@code #alias}
     * @param password the keystore's password, or null; not used for a PEM file
     * @throws InvalidSettingException naming {@code setting} and the file when the key cannot be used
     */
    public static DkimKey load(String setting, String domain, String selector, DkimAlgorithm algorithm, String file, String password) {
        String alias = null;
        String path = file;
        int hash = file.lastIndexOf('#');
        if (hash > 0 && isKeyStore(file.substring(0, hash))) {
            alias = file.substring(hash + 1);
            path = file.substring(0, hash);
        }
        String what = "the DKIM key file '" + path + "' (" + domain + ", selector " + selector + ")";
        byte[] bytes = read(setting, path, what);
        try {
            KeyPair pair = isKeyStore(path) ? fromKeyStore(bytes, password, alias) : fromPem(bytes);
            String actual = pair.privateKey().getAlgorithm();
            if (!actual.equalsIgnoreCase(algorithm.jcaKey()) && !(algorithm == DkimAlgorithm.ED25519_SHA256 && actual.equals("EdDSA"))) {
                throw new GeneralSecurityException("it holds a " + actual + " key, but " + algorithm.tag() + " is configured");
            }
            if (algorithm == DkimAlgorithm.RSA_SHA256 && pair.publicKey() instanceof java.security.interfaces.RSAPublicKey rsa
                    && rsa.getModulus().bitLength() < 1024) {
                throw new GeneralSecurityException("its RSA key has " + rsa.getModulus().bitLength()
                        + " bits; receivers ignore signatures of keys under 1024 bits (RFC 8301), use 2048");
            }
            String source = alias == null ? path : path + "#" + alias;
            return new DkimKey(domain, selector, algorithm, pair.privateKey(), pair.publicKey(), source);
        } catch (GeneralSecurityException | IOException e) {
            throw new InvalidSettingException(setting, setting + ": " + what + " is not usable: " + message(e));
        }
    }

    private static byte[] read(String setting, String path, String what) {
        try {
            Path p = Path.of(path);
            if (Files.size(p) > MAX_KEY_FILE_BYTES) {
                throw new InvalidSettingException(setting, setting + ": " + what + " is larger than a key file can be");
            }
            return Files.readAllBytes(p);
        } catch (IOException | java.nio.file.InvalidPathException e) {
            throw new InvalidSettingException(setting, setting + ": " + what + " cannot be read: " + e);
        }
    }

    static boolean isKeyStore(String path) {
        String p = path.toLowerCase(Locale.ROOT);
        return p.endsWith(".p12") || p.endsWith(".pfx");
    }

    private record KeyPair(PrivateKey privateKey, PublicKey publicKey) {
    }

    private static KeyPair fromPem(byte[] bytes) throws GeneralSecurityException {
        String text = new String(bytes, StandardCharsets.US_ASCII);
        Matcher m = PEM.matcher(text);
        while (m.find()) {
            String label = m.group(1);
            switch (label) {
                case "PRIVATE KEY" -> {
                    byte[] der;
                    try {
                        der = Base64.getMimeDecoder().decode(m.group(2));
                    } catch (IllegalArgumentException e) {
                        throw new GeneralSecurityException("its PRIVATE KEY block is not base64");
                    }
                    PrivateKey key = pkcs8(der);
                    return new KeyPair(key, DkimPublicKeys.derive(key));
                }
                case "RSA PRIVATE KEY", "EC PRIVATE KEY" -> throw new GeneralSecurityException("it holds a " + label
                        + " in the older PKCS#1/SEC1 form; convert it to PKCS#8 with"
                        + " 'openssl pkcs8 -topk8 -nocrypt -in old.pem -out dkim.pem'");
                case "ENCRYPTED PRIVATE KEY" -> throw new GeneralSecurityException("its key is encrypted; give an unencrypted"
                        + " PKCS#8 file readable only by the service, or a PKCS#12 keystore with a password");
                default -> {
                    // a certificate or public key beside the private key: skip it
                }
            }
        }
        throw new GeneralSecurityException("it has no '-----BEGIN PRIVATE KEY-----' block (PKCS#8 PEM)");
    }

    private static PrivateKey pkcs8(byte[] der) throws GeneralSecurityException {
        GeneralSecurityException first = null;
        for (String algorithm : List.of("RSA", "Ed25519")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                first = first == null ? e : first;
            }
        }
        throw new GeneralSecurityException("its PKCS#8 key is neither RSA nor Ed25519", first);
    }

    private static KeyPair fromKeyStore(byte[] bytes, String password, String alias)
            throws GeneralSecurityException, IOException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        char[] secret = password == null ? new char[0] : password.toCharArray();
        try (InputStream in = new java.io.ByteArrayInputStream(bytes)) {
            store.load(in, secret);
        } catch (IOException e) {
            // PKCS#12 reports a wrong password as an IOException caused by UnrecoverableKeyException
            if (e.getCause() instanceof UnrecoverableKeyException) {
                throw new GeneralSecurityException("the keystore password is wrong");
            }
            throw e;
        }
        List<String> keyAliases = new ArrayList<>();
        for (String a : Collections.list(store.aliases())) {
            if (store.isKeyEntry(a)) {
                keyAliases.add(a);
            }
        }
        String chosen = alias;
        if (chosen == null) {
            if (keyAliases.size() != 1) {
                throw new GeneralSecurityException("the keystore has " + keyAliases.size() + " key entries " + keyAliases
                        + "; name one after the file, as file.p12#alias");
            }
            chosen = keyAliases.getFirst();
        } else if (!keyAliases.contains(chosen)) {
            throw new GeneralSecurityException("the keystore has no key entry '" + chosen + "' (it has " + keyAliases + ")");
        }
        Key key;
        try {
            key = store.getKey(chosen, secret);
        } catch (UnrecoverableKeyException e) {
            throw new GeneralSecurityException("the key entry '" + chosen + "' cannot be opened with the keystore password");
        }
        if (!(key instanceof PrivateKey privateKey)) {
            throw new GeneralSecurityException("the entry '" + chosen + "' is not a private key");
        }
        Certificate certificate = store.getCertificate(chosen);
        PublicKey publicKey = DkimPublicKeys.derive(privateKey);
        if (certificate != null && !java.util.Arrays.equals(certificate.getPublicKey().getEncoded(), publicKey.getEncoded())) {
            throw new GeneralSecurityException("the certificate of entry '" + chosen + "' is not for its private key");
        }
        return new KeyPair(privateKey, publicKey);
    }

    private static String message(Exception e) {
        String m = e.getMessage();
        return m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
    }
}
