package io.mailroom.email.service;

import io.mailroom.delivery.webhook.WebhookSecrets;
import io.mailroom.delivery.webhook.WebhookVerifier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;

/**
 * {@code mailroom webhooks sign}: signs a delivery-event body the way a provider does (Standard
 * Webhooks), so an operator can check an endpoint and its secret end to end with curl before the
 * provider is switched over.
 */
@Command(name = "webhooks", mixinStandardHelpOptions = true, description = "Delivery-event webhooks.",
        subcommands = {WebhooksCommand.Sign.class})
final class WebhooksCommand implements Callable<Integer> {

    @Override
    public Integer call() {
        CommandLine.usage(this, System.out);
        return 0;
    }

    @Command(name = "sign", mixinStandardHelpOptions = true,
            description = {"Print the Standard Webhooks headers for a body, as a provider would send them.",
                    "Example: mailroom webhooks sign --secret whsec_... bounce.json  (then curl -H each line --data-binary @bounce.json)"})
    static final class Sign implements Callable<Integer> {

        @Option(names = "--secret", required = true, paramLabel = "WHSEC", description = "the secret, whsec_<base64>")
        String secret;

        @Option(names = "--id", paramLabel = "ID", description = "the webhook id (default: a new msg_<uuid>)")
        String id;

        @Parameters(arity = "1", paramLabel = "FILE", description = "the body, or - for standard input")
        String file;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        InputStream stdin = System.in;
        Clock clock = Clock.systemUTC();

        @Override
        public Integer call() throws IOException {
            PrintWriter out = spec.commandLine().getOut();
            WebhookSecrets secrets = WebhookSecrets.of("--secret", List.of(secret));
            byte[] body = file.equals("-") ? stdin.readAllBytes() : Files.readAllBytes(Path.of(file));
            String webhookId = id != null ? id : "msg_" + UUID.randomUUID().toString().replace("-", "");
            WebhookVerifier.headers(secrets, webhookId, clock.instant().getEpochSecond(), body).entrySet().stream()
                    .sorted(java.util.Map.Entry.comparingByKey(java.util.Comparator.comparing(
                            k -> List.of("webhook-id", "webhook-timestamp", "webhook-signature").indexOf(k))))
                    .forEach(e -> out.println(e.getKey() + ": " + e.getValue()));
            out.flush();
            return 0;
        }
    }
}
