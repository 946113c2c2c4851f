package io.mailroom.example.springshop;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.spring.MailroomEmails;
import io.mailroom.testing.ChildJvm;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import com.icegreen.greenmail.util.GreenMailUtil;
import jakarta.mail.Address;
import jakarta.mail.internet.InternetAddress;
import jakarta.mail.internet.MimeMessage;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The shop as it runs: started on an empty database (it migrates its own schema and Mailroom's), its
 * orders written through JPA, their confirmations enqueued in the same {@code @Transactional} method
 * and sent by Mailroom's real dispatcher, {@code mailroom.jar dispatcher run} as a child process,
 * with this example's own template folder.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ShopEmailsTest {

    private static final TestDatabase db = TestDatabases.createEmpty();
    private static final Path DISPATCHER_JAR = Path.of("..", "..", "mailroom-service", "target", "mailroom.jar");
    private static final Path TEMPLATES = Path.of("src", "main", "templates");

    @RegisterExtension
    static final GreenMailExtension smtp = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", db::jdbcUrl);
        registry.add("spring.datasource.username", () -> db.user() == null ? "postgres" : db.user());
        registry.add("spring.datasource.password", () -> db.password() == null ? "" : db.password());
    }

    @AfterAll
    static void drop() {
        db.close();
    }

    @LocalServerPort
    int port;

    @Autowired
    OrderService service;

    @Autowired
    ShopOrderRepository orders;

    @Autowired
    PlatformTransactionManager transactionManager;

    @Test
    void aCommittedOrdersEmailIsSentByTheDispatcherAndARolledBackOneLeavesNothing() throws Exception {
        int before = mailroom().fetchCount(OUTBOX_MESSAGE);
        long placed = postOrder("ada@example.com", "Ada Lovelace", "punch cards", 3, 4599);
        assertThatThrownBy(() -> service.placeAndDeclinePayment(
                new NewOrder("bob@example.com", "Bob", "brass gears", 1, 1200)))
                .isInstanceOf(PaymentDeclinedException.class);

        assertThat(orders.countByCustomerEmail("ada@example.com")).isOne();
        assertThat(orders.countByCustomerEmail("bob@example.com")).as("the declined order is rolled back").isZero();
        assertThat(mailroom().fetchCount(OUTBOX_MESSAGE)).as("only the committed order's email is added").isEqualTo(before + 1);
        assertThat(mailroom().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(
                OrderService.confirmationKey(placed)))).isOne();

        try (ChildJvm dispatcher = startDispatcher()) {
            // every email in the outbox is sent, so a rolled-back one had every chance to be
            await().atMost(Duration.ofSeconds(60)).until(() -> mailroom().fetchCount(OUTBOX_MESSAGE,
                    OUTBOX_MESSAGE.STATUS.ne("done")) == 0);
            assertThat(dispatcher.isAlive()).isTrue();
        }
        List<MimeMessage> toAda = to("ada@example.com");
        assertThat(toAda).hasSize(1);
        assertThat(toAda.getFirst().getSubject()).isEqualTo("Order #" + placed + " is confirmed");
        assertThat(GreenMailUtil.getBody(toAda.getFirst())).contains("3 x punch cards");
        assertThat(to("bob@example.com")).as("nothing sent for the rolled-back order").isEmpty();
    }

    private static List<MimeMessage> to(String address) throws Exception {
        List<MimeMessage> found = new ArrayList<>();
        for (MimeMessage m : smtp.getReceivedMessages()) {
            for (Address recipient : m.getAllRecipients()) {
                if (recipient instanceof InternetAddress a && a.getAddress().equals(address)) {
                    found.add(m);
                }
            }
        }
        return found;
    }

    @Test
    void theJpaTransactionCarriesTheEmailUnseenUntilItCommits() {
        assertThat(transactionManager).isInstanceOf(JpaTransactionManager.class);
        Long id = new TransactionTemplate(transactionManager).execute(status -> {
            ShopOrder order = service.place(new NewOrder("cy@example.com", "Cy", "ink", 2, 300));
            String key = OrderService.confirmationKey(order.getId());
            // another session sees neither the order nor its email before the JPA transaction commits
            assertThat(mailroom().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key))).isZero();
            assertThat(mailroom().fetchCount(DSL.table("public.orders"), DSL.field("id").eq(order.getId()))).isZero();
            return order.getId();
        });
        assertThat(mailroom().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(
                OrderService.confirmationKey(id)))).isOne();
    }

    @Test
    void theShopAndMailroomEachMigratedTheEmptyDatabaseWithTheirOwnHistory(@Autowired MailroomEmails emails) {
        assertThat(emails).isNotNull();
        assertThat(mailroom().fetch("SELECT version FROM public.flyway_schema_history WHERE success AND version IS NOT NULL ORDER BY installed_rank")
                .getValues(0, String.class)).containsExactly("1");
        assertThat(mailroom().fetch("SELECT script FROM mailroom.mailroom_schema_history WHERE success AND version IS NOT NULL")
                .getValues(0, String.class)).contains("V2__outbox.sql").doesNotContain("V1__init.sql");
    }

    private static DSLContext mailroom() {
        return db.dsl();
    }

    private long postOrder(String email, String name, String item, int quantity, long totalCents) throws Exception {
        String body = """
                {"email":"%s","name":"%s","item":"%s","quantity":%d,"totalCents":%d}"""
                .formatted(email, name, item, quantity, totalCents);
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
            Matcher id = Pattern.compile("\"id\"\\s*:\\s*(\\d+)").matcher(response.body());
            assertThat(id.find()).as(response.body()).isTrue();
            return Long.parseLong(id.group(1));
        }
    }

    /** Mailroom's service as an operator runs it beside the shop: its own process, configured by its environment. */
    private ChildJvm startDispatcher() throws Exception {
        assertThat(DISPATCHER_JAR).as("mailroom-service's runnable jar: build the reactor with verify"
                + " (this module depends on mailroom-service, so the reactor packages it first)").isRegularFile();
        Map<String, String> env = new HashMap<>();
        env.put("MAILROOM_DB_URL", db.jdbcUrl());
        env.put("MAILROOM_DB_USER", db.user() == null ? "postgres" : db.user());
        env.put("MAILROOM_DB_PASSWORD", db.password());
        env.put("MAILROOM_MIGRATE", "false");
        env.put("MAILROOM_TEMPLATES_DIR", TEMPLATES.toAbsolutePath().toString());
        env.put("MAILROOM_TRANSPORT", "smtp");
        env.put("MAILROOM_SMTP_HOST", "127.0.0.1");
        env.put("MAILROOM_SMTP_PORT", String.valueOf(smtp.getSmtp().getPort()));
        env.put("MAILROOM_SMTP_SECURITY", "none");
        env.put("MAILROOM_SMTP_FROM", "Spring Boot shop <shop@example.com>");
        env.put("MAILROOM_DISPATCHER_PORT", "0");
        env.put("MAILROOM_WORKER_ID", "spring-boot-shop-test");
        Path log = Files.createDirectories(Path.of("target", "dispatcher")).resolve("dispatcher.log");
        return ChildJvm.of("dispatcher", "io.mailroom.email.service.MailroomCli")
                .classPath(DISPATCHER_JAR.toAbsolutePath().toString())
                .args(List.of("dispatcher", "run"))
                .env(env)
                .log(log)
                .start();
    }
}
