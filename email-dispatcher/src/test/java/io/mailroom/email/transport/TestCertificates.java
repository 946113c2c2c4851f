package io.mailroom.email.transport;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Self-signed server certificates for TLS tests, made by the running JDK's {@code keytool}: a
 * PKCS12 key store for the server, the certificate as PEM, and a PKCS12 truststore holding only it.
 */
public final class TestCertificates {

    public static final String KEY_STORE_PASSWORD = "server-secret";
    public static final String TRUST_STORE_PASSWORD = "trust-secret";

    /** One issued certificate and the files around it. */
    public record Issued(Path keyStore, Path certificatePem, Path trustStore) {

        /** A server-side TLS context presenting this certificate. */
        public SSLContext serverContext() {
            try (InputStream in = Files.newInputStream(keyStore)) {
                KeyStore ks = KeyStore.getInstance("PKCS12");
                ks.load(in, KEY_STORE_PASSWORD.toCharArray());
                KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(ks, KEY_STORE_PASSWORD.toCharArray());
                SSLContext context = SSLContext.getInstance("TLS");
                context.init(kmf.getKeyManagers(), null, null);
                return context;
            } catch (IOException | GeneralSecurityException e) {
                throw new IllegalStateException("cannot load the test key store " + keyStore, e);
            }
        }
    }

    private TestCertificates() {
    }

    /**
     * @param name             file prefix and CN
     * @param subjectAltNames  keytool's SAN syntax, e.g. {@code dns:localhost,ip:127.0.0.1}
     */
    public static Issued selfSigned(Path dir, String name, String subjectAltNames) {
        Path keyStore = dir.resolve(name + ".p12");
        Path pem = dir.resolve(name + ".pem");
        Path trustStore = dir.resolve(name + "-trust.p12");
        keytool("-genkeypair", "-alias", "server", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=" + name,
                "-ext", "SAN=" + subjectAltNames, "-validity", "2", "-keystore", keyStore.toString(), "-storetype", "PKCS12",
                "-storepass", KEY_STORE_PASSWORD, "-keypass", KEY_STORE_PASSWORD);
        // The certificate as PEM and a truststore holding only it, written here rather than by two
        // more keytool runs (each one a JVM start on a busy machine).
        try (InputStream in = Files.newInputStream(keyStore)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, KEY_STORE_PASSWORD.toCharArray());
            Certificate cert = ks.getCertificate("server");
            Files.writeString(pem, "-----BEGIN CERTIFICATE-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(cert.getEncoded())
                    + "\n-----END CERTIFICATE-----\n", StandardCharsets.US_ASCII);
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("server", cert);
            try (OutputStream out = Files.newOutputStream(trustStore)) {
                trust.store(out, TRUST_STORE_PASSWORD.toCharArray());
            }
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot write the certificate files for " + name, e);
        }
        return new Issued(keyStore, pem, trustStore);
    }

    private static void keytool(String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getOutputStream().close(); // no prompt can wait for an answer
            // keytool writes a line or two and exits; reading to the end first cannot fill a pipe
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            boolean done = p.waitFor(60, TimeUnit.SECONDS);
            if (!done || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException("keytool " + args[0] + " failed: " + output);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run keytool", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running keytool", e);
        }
    }
}
