package io.mailroom.testing;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * The child of {@link ChildJvmTest}: says its arguments on stderr; with stdin open, answers
 * {@code ENV name} with {@code VALUE <value>}, echoes other lines as {@code ECHO line} after a line of
 * noise, and exits with code 3 on {@code EXIT}.
 */
public final class EchoMain {

    private EchoMain() {
    }

    public static void main(String[] args) throws Exception {
        System.err.println("started with " + String.join(" ", args));
        System.out.println("noise a library might print");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.equals("EXIT")) {
                System.exit(3);
            } else if (line.startsWith("ENV ")) {
                System.out.println("VALUE " + System.getenv(line.substring(4)));
            } else {
                System.out.println("noise");
                System.out.println("ECHO " + line);
            }
            System.out.flush();
        }
    }
}
