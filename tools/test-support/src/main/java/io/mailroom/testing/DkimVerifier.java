package io.mailroom.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Checks DKIM signatures with Python's dkimpy (Debian's {@code python3-dkim}, for
 * {@code /usr/bin/python3}), a verifier that shares no code with Mailroom's signer. The key records
 * are handed to dkimpy's DNS hook ({@code dnsfunc}), so no network is used.
 *
 * <p>Tests call {@link #unavailableReason()} first and skip, saying why, where dkimpy is not installed
 * ({@code .ci/run} installs it).
 */
public final class DkimVerifier {

    public static final String PYTHON = "/usr/bin/python3";

    /** What dkimpy said: its exit code (0 all pass, 1 a failure, 2 no signature) and one line per signature. */
    public record Result(int exitCode, String output) {
        public boolean passed() {
            return exitCode == 0;
        }
    }

    private DkimVerifier() {
    }

    /** Null when dkimpy can be used, else why not (for the test's skip message). */
    public static String unavailableReason() {
        if (!Files.isExecutable(Path.of(PYTHON))) {
            return PYTHON + " is not installed (apt-get install python3-dkim)";
        }
        try {
            Process p = new ProcessBuilder(PYTHON, "-c", "import dkim").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                return PYTHON + " cannot import dkim (apt-get install python3-dkim): " + out.strip();
            }
            return null;
        } catch (IOException e) {
            return PYTHON + " cannot be run: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /**
     * @param message the raw message as the server received it
     * @param records TXT record text by DNS name ({@code sel._domainkey.shop.example -> v=DKIM1; k=rsa; p=...})
     */
    public static Result verify(byte[] message, Map<String, String> records) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("dkim-verify");
        try {
            Path script = dir.resolve("dkim_verify.py");
            try (InputStream in = DkimVerifier.class.getResourceAsStream("dkim_verify.py")) {
                Files.copy(in, script);
            }
            Path messageFile = Files.write(dir.resolve("message.eml"), message);
            Path recordsFile = Files.writeString(dir.resolve("records.txt"), records.entrySet().stream()
                    .map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining("\n", "", "\n")), StandardCharsets.US_ASCII);
            Process p = new ProcessBuilder(PYTHON, script.toString(), messageFile.toString(), recordsFile.toString())
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("dkimpy did not finish in 60 s: " + out);
            }
            return new Result(p.exitValue(), out.strip());
        } finally {
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    /** A new key pair: {@code RSA} (2048 bits) or {@code Ed25519}. */
    public static KeyPair newKeyPair(String algorithm) {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance(algorithm);
            if (algorithm.equals("RSA")) {
                g.initialize(2048);
            }
            return g.generateKeyPair();
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes the key as an unencrypted PKCS#8 PEM file, as {@code openssl genpkey} does. */
    public static Path writePem(PrivateKey key, Path file) throws IOException {
        String pem = "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(key.getEncoded())
                + "\n-----END PRIVATE KEY-----\n";
        return Files.writeString(file, pem, StandardCharsets.US_ASCII);
    }

    /**
     * A PKCS#12 keystore holding one new key pair ({@code RSA} 2048 or {@code Ed25519}) under alias
     * {@code dkim}, made by the running JDK's keytool as an operator would.
     */
    public static Path keytoolPkcs12(Path file, String algorithm, String password) throws IOException, InterruptedException {
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(), "-genkeypair", "-alias", "dkim",
                "-keyalg", algorithm, "-dname", "CN=dkim", "-validity", "2", "-keystore", file.toString(),
                "-storetype", "PKCS12", "-storepass", password, "-keypass", password));
        if (algorithm.equals("RSA")) {
            command.addAll(java.util.List.of("-keysize", "2048"));
        }
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException("keytool failed: " + out);
        }
        return file;
    }

    /** The TXT record dkimpy should find for this public key: RSA's SubjectPublicKeyInfo, Ed25519's 32 bytes. */
    public static String txtRecord(java.security.PublicKey key) {
        byte[] spki = key.getEncoded();
        if (key.getAlgorithm().equals("RSA")) {
            return "v=DKIM1; k=rsa; p=" + Base64.getEncoder().encodeToString(spki);
        }
        byte[] raw = java.util.Arrays.copyOfRange(spki, spki.length - 32, spki.length);
        return "v=DKIM1; k=ed25519; p=" + Base64.getEncoder().encodeToString(raw);
    }
}
