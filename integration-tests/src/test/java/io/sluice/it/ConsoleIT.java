package io.sluice.it;

import static io.sluice.it.ConsoleSession.follow;
import static io.sluice.it.ConsoleSession.get;
import static io.sluice.it.ConsoleSession.post;
import static io.sluice.it.ConsoleSession.signIn;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * The web console ({@code /console} on the admin port) against {@code sluice dev}: its doors with raw HTTP (a sign-in
 * without its form token, a wrong secret, a state-changing form without the session's CSRF token, the cookie's
 * attributes), then a real browser (Selenium driving Debian's chromium: skipped without it, failing under
 * {@code SLUICE_REQUIRE_TOOLS=1}) signing in, listing queues, opening one, sending, purging with the typed
 * confirmation, the cluster page, and a key limited by its rules. The browser's screenshots go to
 * {@code target/console-screenshots} (docs/console.md shows them).
 */
class ConsoleIT {
    static SluiceProcess server;
    static SqsClient sqs;
    static String base;

    @BeforeAll
    static void start() throws Exception {
        Path keys = Files.createTempFile(SluiceProcess.itDir(), "console-keys", ".json");
        Files.writeString(keys, "{\"keys\": [{\"accessKey\": \"mine\", \"secretKey\": \"mine-secret\","
                + " \"allow\": [{\"action\": \"*\", \"queue\": \"mine-*\"}]},"
                // may look at every queue but not receive: no peek
                + " {\"accessKey\": \"reader\", \"secretKey\": \"reader-secret\", \"allow\": [{\"action\": \"Get*\","
                + " \"queue\": \"*\"}, {\"action\": \"List*\", \"queue\": \"*\"}]},"
                // rules whose globs match made-up action names: still not an admin
                + " {\"accessKey\": \"sly\", \"secretKey\": \"sly-secret\", \"allow\": [{\"action\": \"S*\","
                + " \"queue\": \"*\"}, {\"action\": \"*Cluster\", \"queue\": \"*\"}]}]}");
        // pages reload their figures every second here (10 s by default), so a test sees several refreshes quickly
        // sly may make 2 requests a second: the usage page's throttles
        server = SluiceProcess.start("console", Map.of("SLUICE_AUTH_KEYS_FILE", keys.toString(),
                "SLUICE_CONSOLE_REFRESH_SECONDS", "1", "SLUICE_FRONTEND_KEY_RATE_LIMITS", "sly=2"));
        sqs = SqsClients.client(server.endpoint());
        base = server.adminEndpoint().toString().replaceAll("/$", "");
        sqs.createQueue(b -> b.queueName("orders-dlq"));
        sqs.createQueue(b -> b.queueName("orders").attributesWithStrings(Map.of("RedrivePolicy",
                "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:orders-dlq\",\"maxReceiveCount\":\"3\"}")));
        sqs.createQueue(b -> b.queueName("events.fifo").attributesWithStrings(Map.of("FifoQueue", "true",
                "ContentBasedDeduplication", "true")));
        sqs.createQueue(b -> b.queueName("mine-jobs"));
        for (int i = 0; i < 3; i++) {
            int n = i;
            sqs.sendMessage(b -> b.queueUrl(url("orders")).messageBody("order " + n));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (sqs != null) {
            sqs.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static String url(String queue) {
        return server.endpoint() + "/000000000000/" + queue;
    }

    static int messages(String queue) {
        Map<String, String> a = sqs.getQueueAttributes(b -> b.queueUrl(url(queue)).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE)).attributesAsStrings();
        return Integer.parseInt(a.get("ApproximateNumberOfMessages"))
                + Integer.parseInt(a.get("ApproximateNumberOfMessagesNotVisible"));
    }

    /** The console's "Oldest" column is a named-only attribute, also there for SDK users; never in All. */
    @Test
    void theAgeOfTheOldestMessageIsAnAttributeGivenWhenNamed() {
        String age = "SluiceApproximateAgeOfOldestMessage";
        sqs.createQueue(b -> b.queueName("aging"));
        assertEquals("0", sqs.getQueueAttributes(b -> b.queueUrl(url("aging")).attributeNamesWithStrings(age))
                .attributesAsStrings().get(age), "an empty queue");
        sqs.sendMessage(b -> b.queueUrl(url("aging")).messageBody("old"));
        await().atMost(Duration.ofSeconds(120)).until(() -> Long.parseLong(sqs.getQueueAttributes(b -> b
                .queueUrl(url("aging")).attributeNamesWithStrings(age)).attributesAsStrings().get(age)) >= 2);
        assertFalse(sqs.getQueueAttributes(b -> b.queueUrl(url("aging")).attributeNames(QueueAttributeName.ALL))
                .attributesAsStrings().containsKey(age), "All stays what SQS returns");
    }

    /**
     * A peek shows 10 messages when 10 are visible, however unevenly the queue's partitions hold them (10 messages
     * spread at random over 16 partitions, a share of 1 each: some hold two or more, so asking each for its share
     * alone would show fewer, 97% of the time), and leases none.
     */
    @Test
    void aPeekOfAManyPartitionQueueShowsTenWhenThereAreTen() throws Exception {
        sqs.createQueue(b -> b.queueName("spread").attributesWithStrings(Map.of("SluicePartitions", "16")));
        for (int i = 0; i < 10; i++) {
            int n = i;
            sqs.sendMessage(b -> b.queueUrl(url("spread")).messageBody("spread " + n));
        }
        await().atMost(Duration.ofSeconds(120)).until(() -> messages("spread") == 10);
        String session = ConsoleSession.signIn(base, Map.of("access_key", SluiceProcess.ACCESS_KEY, "secret_key",
                SluiceProcess.SECRET_KEY));
        String page = get(base, "/console/queues/spread?peek=1", session).body();
        assertEquals(10, page.split("class=\"wrap body\"", -1).length - 1, page);
        assertEquals(10, messages("spread"), "nothing leased");
    }

    // ---- the doors, with raw HTTP ----

    @Test
    void theDoorsHoldWithoutABrowser() throws Exception {
        HttpResponse<String> anonymous = get(base, "/console/queues", null);
        assertEquals(303, anonymous.statusCode(), "a page without a session goes to the sign-in");
        assertEquals("/console/login", anonymous.headers().firstValue("location").orElse(""));

        HttpResponse<String> page = get(base, "/console/login", null);
        String login = ConsoleSession.cookieValue(page, "sluice_console_login");
        // a sign-in posted without the form's token (from another site, say) is refused before the secret is looked at
        HttpResponse<String> noToken = post(base, "/console/login", "sluice_console_login=" + login,
                Map.of("access_key", SluiceProcess.ACCESS_KEY, "secret_key", SluiceProcess.SECRET_KEY));
        assertEquals(403, noToken.statusCode());
        assertEquals(null, ConsoleSession.cookieValue(noToken, "sluice_console"), "no session");
        HttpResponse<String> wrong = post(base, "/console/login", "sluice_console_login=" + login, Map.of("csrf",
                ConsoleSession.csrf(page.body()), "access_key", SluiceProcess.ACCESS_KEY, "secret_key", "not-the-secret"));
        assertEquals(401, wrong.statusCode());
        assertEquals(null, ConsoleSession.cookieValue(wrong, "sluice_console"), "no session");
        HttpResponse<String> badToken = post(base, "/console/login", "sluice_console_login=" + login, Map.of("csrf",
                ConsoleSession.csrf(page.body()), "token", "not-the-admin-token"));
        assertEquals(401, badToken.statusCode());

        page = get(base, "/console/login", null);
        HttpResponse<String> ok = post(base, "/console/login", "sluice_console_login=" + ConsoleSession.cookieValue(page,
                "sluice_console_login"), Map.of("csrf", ConsoleSession.csrf(page.body()), "access_key", SluiceProcess.ACCESS_KEY,
                "secret_key", SluiceProcess.SECRET_KEY));
        assertEquals(303, ok.statusCode());
        String setCookie = ok.headers().allValues("set-cookie").stream().filter(c -> c.startsWith("sluice_console="))
                .findFirst().orElseThrow();
        assertTrue(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict")
                && setCookie.contains("Path=/console"), setCookie);
        assertFalse(setCookie.contains("Secure"), "plain HTTP: a Secure cookie would never come back");
        String session = "sluice_console=" + ConsoleSession.cookieValue(ok, "sluice_console");
        HttpResponse<String> queues = get(base, "/console/queues", session);
        assertEquals(200, queues.statusCode());
        assertTrue(queues.headers().firstValue("content-security-policy").orElse("").contains("frame-ancestors 'none'"));

        // a purge with the session's cookie but without its CSRF token: refused, nothing purged
        int before = messages("orders");
        assertTrue(before >= 3, "orders holds its messages: " + before);
        HttpResponse<String> forged = post(base, "/console/queues/orders/purge", session, Map.of("confirm", "orders"));
        assertEquals(403, forged.statusCode());
        HttpResponse<String> wrongToken = post(base, "/console/queues/orders/purge", session, Map.of("confirm", "orders",
                "csrf", "0".repeat(64)));
        assertEquals(403, wrongToken.statusCode());
        assertEquals(before, messages("orders"), "nothing was purged");

        // the admin token signs in too, and may see the cluster page
        String token = Files.readString(server.dataDir().resolve("admin-token")).trim();
        String adminSession = signIn(base, Map.of("token", token));
        HttpResponse<String> cluster = get(base, "/console/cluster", adminSession);
        assertEquals(200, cluster.statusCode());
        assertTrue(cluster.body().contains("alive"), cluster.body());
        HttpResponse<String> rebalanced = post(base, "/console/cluster/rebalance", adminSession, Map.of("csrf",
                ConsoleSession.csrf(cluster.body()), "max_moves", "2"));
        assertEquals(303, rebalanced.statusCode(), rebalanced.body());
        assertTrue(get(base, rebalanced.headers().firstValue("location").orElseThrow(), adminSession).body()
                .contains("Rebalance done: 0 replica moves proposed."), "one backend: nothing to move");
        // a key with the admin rule sees the cluster page, but rebalancing (a cluster write) needs the admin token
        HttpResponse<String> keyRebalance = post(base, "/console/cluster/rebalance", session, Map.of("csrf",
                ConsoleSession.csrf(get(base, "/console/cluster", session).body()), "max_moves", "1"));
        assertEquals(403, keyRebalance.statusCode());

        // a key limited to mine-* lists only those and may not open another queue or the cluster page
        String mine = signIn(base, Map.of("access_key", "mine", "secret_key", "mine-secret"));
        String list = get(base, "/console/queues", mine).body();
        assertTrue(list.contains("mine-jobs"), list);
        assertFalse(list.contains("orders"), "another key's queue is not listed: " + list);
        assertEquals(403, get(base, "/console/queues/orders", mine).statusCode());
        assertEquals(403, get(base, "/console/live/history/orders?range=86400", mine).statusCode(),
                "nor its charts' data");
        assertEquals(403, get(base, "/console/live/queues/orders", mine).statusCode(), "nor its live region");
        assertEquals(200, get(base, "/console/live/history/mine-jobs?range=900", mine).statusCode());
        assertEquals(403, get(base, "/console/cluster", mine).statusCode());
        assertEquals(403, post(base, "/console/cluster/rebalance", mine, Map.of("csrf", ConsoleSession.csrf(
                get(base, "/console/queues", mine).body()), "max_moves", "5")).statusCode(), "only admins rebalance");
        String minePage = get(base, "/console/queues/mine-jobs", mine).body();
        HttpResponse<String> sendElsewhere = post(base, "/console/queues/orders/send", mine, Map.of("csrf", ConsoleSession.csrf(minePage),
                "body", "not mine"));
        assertEquals(403, sendElsewhere.statusCode(), "its rules decide, whatever the form says");
        assertEquals(before, messages("orders"));
        HttpResponse<String> denied = get(base, "/console/queues/orders", mine);
        assertEquals(403, denied.statusCode());
        assertTrue(denied.body().contains("AccessDenied"), denied.body());

        // a key that may read a queue's attributes but not receive from it sees the page but may not peek
        String reader = signIn(base, Map.of("access_key", "reader", "secret_key", "reader-secret"));
        assertEquals(200, get(base, "/console/queues/orders", reader).statusCode());
        HttpResponse<String> peek = get(base, "/console/queues/orders?peek=1", reader);
        assertEquals(403, peek.statusCode(), "a peek reads bodies: it needs ReceiveMessage");
        assertTrue(peek.body().contains("AccessDenied"), peek.body());

        // rules whose globs happen to match are not the admin rule
        String sly = signIn(base, Map.of("access_key", "sly", "secret_key", "sly-secret"));
        assertEquals(403, get(base, "/console/cluster", sly).statusCode());
        HttpResponse<String> slyRebalance = post(base, "/console/cluster/rebalance", sly, Map.of("csrf",
                ConsoleSession.csrf(get(base, "/console/queues", sly).body()), "max_moves", "5"));
        assertEquals(403, slyRebalance.statusCode());
        assertTrue(slyRebalance.body().contains("Rebalancing needs the admin token"), slyRebalance.body());

        // peeked bodies are text, never markup
        sqs.createQueue(b -> b.queueName("markup"));
        sqs.sendMessage(b -> b.queueUrl(url("markup")).messageBody("<b onmouseover=\"x()\">bold</b>"));
        String peeked = get(base, "/console/queues/markup?peek=1", session).body();
        assertTrue(peeked.contains("&lt;b onmouseover=&quot;x()&quot;&gt;bold&lt;/b&gt;"), peeked);
        assertFalse(peeked.contains("<b onmouseover"), "escaped");
        // a long body's row shows its first 200 characters, never cut inside a surrogate pair (an emoji as the 200th
        // character); the whole body is under it
        sqs.createQueue(b -> b.queueName("long"));
        String longBody = "a".repeat(199) + "\uD83D\uDE00" + "b".repeat(20);
        sqs.sendMessage(b -> b.queueUrl(url("long")).messageBody(longBody));
        String longPeek = get(base, "/console/queues/long?peek=1", session).body();
        String row = longPeek.substring(longPeek.indexOf("<td class=\"wrap body\">"));
        row = row.substring(0, row.indexOf("</td>"));
        assertEquals("<td class=\"wrap body\">" + "a".repeat(199) + "\uD83D\uDE00…", row, "cut after 200 characters");
        assertTrue(longPeek.contains(">" + longBody + "</pre>"), "the whole body unfolds");
        // a body typed with line breaks arrives with them, not with the form's CR LF
        sqs.createQueue(b -> b.queueName("typed"));
        assertEquals(303, post(base, "/console/queues/typed/send", session, Map.of("csrf", ConsoleSession.csrf(
                get(base, "/console/queues/typed", session).body()), "body", "line 1\r\nline 2")).statusCode());
        assertEquals(List.of("line 1\nline 2"), sqs.receiveMessage(b -> b.queueUrl(url("typed")).waitTimeSeconds(5))
                .messages().stream().map(m -> m.body()).toList());

        // sign-out: refused without its CSRF token; with it, the old cookie is worth nothing
        assertEquals(403, post(base, "/console/logout", session, Map.of()).statusCode());
        assertEquals(200, get(base, "/console/queues", session).statusCode(), "still signed in");
        assertEquals(303, post(base, "/console/logout", session, Map.of("csrf", ConsoleSession.csrf(
                get(base, "/console/queues", session).body()))).statusCode());
        assertEquals(303, get(base, "/console/queues", session).statusCode(), "the replayed cookie is refused");
    }

    /**
     * Ten failed sign-ins from one address in a minute: the eleventh is refused even with the right secret (429,
     * Retry-After), while another address signs in. The flood comes from 127.0.0.2, so the other tests' address
     * (127.0.0.1) keeps its budget.
     */
    @Test
    void failedSignInsFromOneAddressAreThrottled() throws Exception {
        java.net.URI admin = java.net.URI.create(base);
        String page = exchange(admin, "GET /console/login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        java.util.regex.Matcher cookie = java.util.regex.Pattern.compile("(?i)set-cookie: sluice_console_login=([^;]+)")
                .matcher(page);
        assertTrue(cookie.find(), page);
        String csrf = ConsoleSession.csrf(page);
        for (int i = 0; i <= 10; i++) {
            String secret = i < 10 ? "guess-" + i : SluiceProcess.SECRET_KEY;
            String form = "csrf=" + csrf + "&access_key=" + SluiceProcess.ACCESS_KEY + "&secret_key=" + secret;
            String answer = exchange(admin, "POST /console/login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + "Cookie: sluice_console_login=" + cookie.group(1) + "\r\nContent-Type: application/x-www-form-"
                    + "urlencoded\r\nContent-Length: " + form.length() + "\r\n\r\n" + form);
            String status = answer.substring(0, answer.indexOf("\r\n"));
            if (i < 10) {
                assertEquals("HTTP/1.1 401 Unauthorized", status, "failure " + (i + 1));
            } else {
                assertEquals("HTTP/1.1 429 Too Many Requests", status, "the right secret, after ten failures");
                assertTrue(java.util.regex.Pattern.compile("(?i)retry-after: ([1-9]|[1-5][0-9]|60)\r\n").matcher(answer)
                        .find(), "the seconds left in the minute: " + answer);
                assertFalse(answer.toLowerCase(java.util.Locale.ROOT).contains("set-cookie: sluice_console="),
                        "no session");
            }
        }
        assertTrue(ConsoleSession.signIn(base, Map.of("access_key", SluiceProcess.ACCESS_KEY, "secret_key",
                SluiceProcess.SECRET_KEY)).startsWith("sluice_console="), "another address signs in");
    }

    /** One HTTP/1.1 exchange with the admin port from the local address 127.0.0.2 (the server closes after it). */
    private static String exchange(java.net.URI admin, String request) throws Exception {
        try (java.net.Socket socket = new java.net.Socket()) {
            try {
                socket.bind(new java.net.InetSocketAddress("127.0.0.2", 0));
            } catch (java.net.BindException e) { // Linux routes all of 127/8 to loopback; macOS only 127.0.0.1
                org.junit.jupiter.api.Assumptions.abort("no local address 127.0.0.2 here: " + e.getMessage());
            }
            socket.connect(new java.net.InetSocketAddress(admin.getHost(), admin.getPort()), 10_000);
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /** A session ends when its key's secret changes (put-key with a new secret), without waiting for its expiry. */
    @Test
    void aSessionEndsWhenItsKeysSecretChanges() throws Exception {
        String token = Files.readString(server.dataDir().resolve("admin-token")).trim();
        assertEquals(200, putKey(token, "rotating", "first-secret").statusCode());
        String session = signIn(base, Map.of("access_key", "rotating", "secret_key", "first-secret"));
        assertEquals(200, get(base, "/console/queues", session).statusCode());
        assertEquals(200, putKey(token, "rotating", "second-secret").statusCode());
        await().atMost(Duration.ofSeconds(120)).until(() -> get(base, "/console/queues", session).statusCode() == 303);
        signIn(base, Map.of("access_key", "rotating", "secret_key", "second-secret")); // the new secret works
    }

    private static HttpResponse<String> putKey(String token, String key, String secret) throws Exception {
        return java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create(base + "/admin/access-keys")).header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json").POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                        "{\"accessKey\": \"" + key + "\", \"secretKey\": \"" + secret
                                + "\", \"allow\": [[\"*\", \"mine-*\"]]}")).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    // ---- the browser ----

    @Test
    void aBrowserPeeksWithoutLeasingRedrivesADeadLetterQueueAndEditsAttributes() throws Exception {
        String source = "work";
        String dlq = "work-dlq";
        sqs.createQueue(b -> b.queueName(dlq));
        sqs.createQueue(b -> b.queueName(source).attributesWithStrings(Map.of("RedrivePolicy",
                "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:" + dlq + "\",\"maxReceiveCount\":\"1\"}")));
        for (int i = 0; i < 3; i++) {
            int n = i;
            sqs.sendMessage(b -> b.queueUrl(url(source)).messageBody("job " + n));
        }
        // each received once and released: the next receive hands it to the dead-letter queue
        java.util.Set<String> seen = new java.util.HashSet<>();
        await().atMost(Duration.ofSeconds(120)).until(() -> {
            for (Message m : sqs.receiveMessage(b -> b.queueUrl(url(source)).maxNumberOfMessages(10)
                    .waitTimeSeconds(1)).messages()) {
                seen.add(m.body());
                sqs.changeMessageVisibility(b -> b.queueUrl(url(source)).receiptHandle(m.receiptHandle())
                        .visibilityTimeout(0));
            }
            return messages(dlq) == 3;
        });
        assertEquals(3, seen.size());
        WebDriver driver = ConsoleSession.browser();
        try {
            signIn(driver, base, SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
            driver.get(base + "/console/queues/" + dlq);
            assertEquals(source, text(driver, By.id("dlq-sources")));
            follow(driver, By.id("peek"));
            List<String> bodies = driver.findElements(By.cssSelector("#peeked td.body")).stream()
                    .map(e -> e.getText()).sorted().toList();
            assertEquals(List.of("job 0", "job 1", "job 2"), bodies);
            assertTrue(driver.findElement(By.cssSelector("#peeked tbody tr td:nth-child(5)")).getText()
                    .endsWith(":" + source), "the dead-letter source is shown");
            assertEquals(List.of("maxReceiveCount reached"), driver.findElements(
                    By.cssSelector("#peeked td.reason")).stream().map(e -> e.getText()).distinct().toList(),
                    "and why each was dead-lettered");
            new org.openqa.selenium.interactions.Actions(driver).scrollToElement(driver.findElement(By.id("peeked")))
                    .perform();
            ConsoleSession.screenshot(driver, "dead-letter-queue");
            List<String> receives = driver.findElements(By.cssSelector("#peeked td.receives")).stream()
                    .map(e -> e.getText()).toList();
            driver.navigate().refresh(); // a second peek: still nothing leased, no receive counted
            assertEquals(3, driver.findElements(By.cssSelector("#peeked td.body")).size());
            assertEquals(receives, driver.findElements(By.cssSelector("#peeked td.receives")).stream()
                    .map(e -> e.getText()).toList(), "a peek is not a receive");
            assertEquals("3", sqs.getQueueAttributes(b -> b.queueUrl(url(dlq)).attributeNames(
                    QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).attributesAsStrings()
                    .get("ApproximateNumberOfMessages"), "peeked messages stay visible");

            follow(driver, By.id("redrive"));
            WebElement redrivePage = driver.findElement(By.tagName("html"));
            // followed in place (the live region reloads every second here), not by reloading the page
            await().atMost(Duration.ofSeconds(120)).ignoreExceptions().until(() -> driver.findElement(By.cssSelector(
                    "#redrives td.status")).getText().startsWith("COMPLETED") && Integer.parseInt(driver.findElement(
                    By.id("queue-live")).getAttribute("data-refreshed")) >= 1);
            redrivePage.isEnabled(); // throws if the page was reloaded
            assertEquals("3", text(driver, By.cssSelector("#redrives td.moved")));
            assertTrue(driver.findElements(By.id("done")).isEmpty(), "\"Redrive started.\" is gone once it is done");
            By bar = By.cssSelector("#redrives progress.redrive-progress");
            assertEquals(attribute(driver, bar, "max"), attribute(driver, bar, "value"), "a full progress bar");
            new org.openqa.selenium.interactions.Actions(driver).scrollToElement(driver.findElement(By.id("redrives")))
                    .perform();
            ConsoleSession.screenshot(driver, "redrive");
            await().atMost(Duration.ofSeconds(120)).until(() -> messages(source) == 3 && messages(dlq) == 0);

            // this node samples every 10 s while its console is used: the list gains the queue's rates
            await().atMost(Duration.ofSeconds(120)).until(() -> {
                driver.get(base + "/console/queues");
                return cell(driver, source, 8).matches("\\d+\\.\\d") && cell(driver, source, 9).matches("\\d+\\.\\d");
            });
            driver.get(base + "/console/queues/" + source);
            driver.findElement(By.id("set-VisibilityTimeout")).clear();
            driver.findElement(By.id("set-VisibilityTimeout")).sendKeys("45");
            follow(driver, By.id("save-attributes"));
            assertEquals("Attributes saved.", driver.findElement(By.id("done")).getText());
            assertEquals("45", sqs.getQueueAttributes(b -> b.queueUrl(url(source)).attributeNames(
                    QueueAttributeName.VISIBILITY_TIMEOUT)).attributesAsStrings().get("VisibilityTimeout"));
            driver.findElement(By.id("set-DelaySeconds")).clear();
            driver.findElement(By.id("set-DelaySeconds")).sendKeys("99999");
            follow(driver, By.id("save-attributes"));
            assertTrue(driver.findElement(By.id("problem")).getText().startsWith("InvalidAttributeValue"),
                    driver.findElement(By.id("problem")).getText());
            assertTrue(driver.findElement(By.id("error-DelaySeconds")).getText().contains("DelaySeconds"),
                    "the refusal is shown next to the field");
            assertEquals("0", sqs.getQueueAttributes(b -> b.queueUrl(url(source)).attributeNames(
                    QueueAttributeName.DELAY_SECONDS)).attributesAsStrings().get("DelaySeconds"));
        } finally {
            driver.quit();
        }
    }

    /**
     * Issue 47, items 1 and 2: among 1,000 queues the deepest, last by name, is first by depth (the list sorts every
     * queue on the server, not the first page); the count at the top is the true total; a filter typed (not
     * submitted) narrows the list in place and survives three refreshes with its focus, while a message sent meanwhile
     * shows up without the page being reloaded.
     */
    @Test
    void aThousandQueuesAreSortedFilteredAndRefreshedInPlace() throws Exception {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        try {
            List<java.util.concurrent.Future<?>> created = new java.util.ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                String name = String.format("zz-bulk-%04d", i) /* after the other tests' queues by name */;
                created.add(pool.submit(() -> sqs.createQueue(b -> b.queueName(name))));
            }
            for (java.util.concurrent.Future<?> f : created) {
                f.get(120, java.util.concurrent.TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdown();
        }
        sqs.createQueue(b -> b.queueName("zzz-deepest"));
        for (int i = 0; i < 6; i++) {
            sqs.sendMessageBatch(b -> b.queueUrl(url("zzz-deepest")).entries(java.util.stream.IntStream.range(0, 10)
                    .mapToObj(n -> software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry.builder()
                            .id("m" + n).messageBody("deep " + n).build()).toList()));
        }
        int total = sqs.listQueues(b -> b.maxResults(1000)).queueUrls().size(); // at least 1,001: the first 1,000
        WebDriver driver = ConsoleSession.browser();
        try {
            signIn(driver, base, SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
            String count = text(driver, By.id("queue-count"));
            assertTrue(count.matches("1,0\\d\\d queues; showing 1–50\\..*"), count);
            assertTrue(total <= Integer.parseInt(count.substring(0, 5).replace(",", "")), count + " vs " + total);
            follow(driver, By.id("sort-visible"));
            // the figures are a sample (at most 2 s old when a page asks, reloaded every second here): once it
            // counts the 60 messages, the deepest queue, last by name, is first by depth
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> driver.findElement(By.xpath(
                    "//table[@id='queues']/tbody/tr[1]/td[1]")).getText().equals("zzz-deepest"));
            assertEquals("60", cell(driver, "zzz-deepest", 4));
            assertTrue(driver.getCurrentUrl().contains("sort=visible"), driver.getCurrentUrl());
            follow(driver, By.id("next-page"));
            assertTrue(text(driver, By.id("queue-count")).contains("showing 51–100"));

            driver.get(base + "/console/queues");
            WebElement page = driver.findElement(By.tagName("html"));
            WebElement filter = driver.findElement(By.id("filter"));
            filter.sendKeys("ZZ-BULK-09"); // typed, not submitted; any case
            WebElement list = driver.findElement(By.id("queue-list"));
            int typedAt = Integer.parseInt(list.getAttribute("data-refreshed"));
            await().atMost(Duration.ofSeconds(60)).until(() -> text(driver, By.id("queue-count")).startsWith("100 of "));
            await().atMost(Duration.ofSeconds(60)).until(() -> Integer.parseInt(driver.findElement(By.id("queue-list"))
                    .getAttribute("data-refreshed")) >= typedAt + 4); // the typed filter's load and three refreshes
            assertEquals("ZZ-BULK-09", driver.findElement(By.id("filter")).getAttribute("value"), "the typed filter stays");
            assertEquals(filter, driver.switchTo().activeElement(), "and keeps its focus");
            List<String> names = await().atMost(Duration.ofSeconds(30)).ignoreExceptions() // read between reloads
                    .until(() -> driver.findElements(By.xpath("//table[@id='queues']/tbody/tr/td[1]")).stream()
                            .map(WebElement::getText).toList(), n -> n.size() == 50);
            assertTrue(names.stream().allMatch(n -> n.startsWith("zz-bulk-09")), names.toString());
            assertTrue(driver.getCurrentUrl().contains("filter=ZZ-BULK-09"), "a reload keeps it: " + driver.getCurrentUrl());
            sqs.sendMessage(b -> b.queueUrl(url("zz-bulk-0900")).messageBody("seen in place"));
            await().atMost(Duration.ofSeconds(60)).until(() -> cell(driver, "zz-bulk-0900", 4).equals("1"));
            page.isEnabled(); // throws if the page was reloaded: the figures changed in place
            ConsoleSession.screenshot(driver, "queues-filtered");
        } finally {
            driver.quit();
        }
    }

    /**
     * Issue 47, items 3 and 4: a peek shows a message's attributes and system attributes as text (a hostile name and
     * value included), its size and its whole body (JSON pretty-printed); a poll is a real receive whose messages
     * are released or deleted one at a time; attributes read in their units with the raw value on hover.
     */
    @Test
    void messagesArePeekedWholeAndPolledReleasedAndDeleted() throws Exception {
        String hostile = "<img src=x onerror=\"document.title='pwned'\">";
        sqs.createQueue(b -> b.queueName("inspect"));
        sqs.sendMessage(b -> b.queueUrl(url("inspect")).messageBody("{\"order\":42,\"items\":[\"a\",\"b\"]}")
                .messageAttributes(Map.of("origin", software.amazon.awssdk.services.sqs.model.MessageAttributeValue
                        .builder().dataType("String").stringValue(hostile).build(), "weight",
                        software.amazon.awssdk.services.sqs.model.MessageAttributeValue.builder().dataType("Number")
                                .stringValue("7").build())));
        sqs.sendMessage(b -> b.queueUrl(url("inspect")).messageBody("plain"));
        await().atMost(Duration.ofSeconds(120)).until(() -> messages("inspect") == 2);
        WebDriver driver = ConsoleSession.browser();
        try {
            signIn(driver, base, SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
            driver.get(base + "/console/queues/inspect?peek=1");
            WebElement row = driver.findElement(By.xpath("//table[@id='peeked']/tbody/tr[td[contains(@class,'body')"
                    + " and starts-with(text(), '{')]]"));
            WebElement details = row.findElement(By.xpath("following-sibling::tr[1]//details"));
            details.findElement(By.tagName("summary")).click();
            assertEquals("{\n  \"order\" : 42,\n  \"items\" : [ \"a\", \"b\" ]\n}",
                    details.findElement(By.cssSelector("pre.full-body")).getText(), "pretty-printed JSON");
            List<String> names = details.findElements(By.cssSelector("td.attribute-name")).stream()
                    .map(WebElement::getText).toList();
            List<String> values = details.findElements(By.cssSelector("td.attribute-value")).stream()
                    .map(WebElement::getText).toList();
            assertEquals(List.of("origin", "weight"), names.stream().sorted().toList());
            assertTrue(values.contains(hostile), "the hostile value shown as text: " + values);
            assertTrue(details.findElements(By.tagName("img")).isEmpty(), "never as markup");
            assertFalse(driver.getTitle().contains("pwned"));
            assertTrue(details.getText().contains("Receive count"), details.getText());
            assertTrue(row.findElement(By.cssSelector("td.size")).getText().endsWith("bytes"));
            ((org.openqa.selenium.JavascriptExecutor) driver).executeScript("arguments[0].scrollIntoView()", row);
            ConsoleSession.screenshot(driver, "message");
            assertEquals(2, messages("inspect"), "peeking leased nothing");

            // a poll leases: release one (visible again at once), delete the other
            driver.findElement(By.id("poll-visibility")).clear();
            driver.findElement(By.id("poll-visibility")).sendKeys("300");
            follow(driver, By.id("poll"));
            assertEquals(2, driver.findElements(By.cssSelector("#polled button.delete-message")).size());
            assertEquals("0", sqs.getQueueAttributes(b -> b.queueUrl(url("inspect")).attributeNames(
                    QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).attributesAsStrings()
                    .get("ApproximateNumberOfMessages"), "both in flight for 300 s");
            ((org.openqa.selenium.JavascriptExecutor) driver).executeScript("arguments[0].scrollIntoView()",
                    driver.findElement(By.id("polled")));
            ConsoleSession.screenshot(driver, "polled");
            WebElement plain = driver.findElement(By.xpath("//table[@id='polled']/tbody/tr[td[contains(@class,'body')"
                    + " and text()='plain']]"));
            follow(driver, By.xpath("//table[@id='polled']/tbody/tr[td[contains(@class,'body') and text()='plain']]"
                    + "//button[contains(@class,'release-message')]"));
            assertEquals("Message released: visible again.", driver.findElement(By.id("done")).getText());
            await().atMost(Duration.ofSeconds(60)).until(() -> "1".equals(sqs.getQueueAttributes(b -> b
                    .queueUrl(url("inspect")).attributeNames(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES))
                    .attributesAsStrings().get("ApproximateNumberOfMessages")));
            follow(driver, By.id("poll"));
            follow(driver, By.xpath("//table[@id='polled']/tbody/tr[td[contains(@class,'body') and text()='plain']]"
                    + "//button[contains(@class,'delete-message')]"));
            assertEquals("Message deleted.", driver.findElement(By.id("done")).getText());
            await().atMost(Duration.ofSeconds(60)).until(() -> messages("inspect") == 1);
            assertTrue(plain != null);

            // attributes in their units, the raw value on hover
            assertEquals("4 d", text(driver, By.id("attr-MessageRetentionPeriod")));
            assertEquals("345600", attribute(driver, By.id("attr-MessageRetentionPeriod"), "title"));
            assertEquals("1 MiB", text(driver, By.id("attr-MaximumMessageSize")));
            assertTrue(driver.findElement(By.id("hint-VisibilityTimeout")).getText()
                    .startsWith("seconds, 0 s to 12 h; now 30 s"), driver.findElement(By.id("hint-VisibilityTimeout"))
                    .getText());
        } finally {
            driver.quit();
        }
    }

    /**
     * Issue 47, item 7: a queue's page lists who received from it through this node (access key, address, rates,
     * messages held), and the usage page each key's requests and throttles; a key that is not an admin sees only its
     * own usage.
     */
    @Test
    void aQueuesConsumersAndEachKeysUsageAreShown() throws Exception {
        sqs.createQueue(b -> b.queueName("mine-work"));
        for (int i = 0; i < 3; i++) {
            int n = i;
            sqs.sendMessage(b -> b.queueUrl(url("mine-work")).messageBody("work " + n));
        }
        try (SqsClient mine = SqsClients.client(server.endpoint(), "mine", "mine-secret")) {
            List<Message> got = new java.util.ArrayList<>();
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                got.addAll(mine.receiveMessage(b -> b.queueUrl(url("mine-work")).maxNumberOfMessages(10)
                        .visibilityTimeout(300).waitTimeSeconds(1)).messages());
                return got.size() == 3;
            });
            mine.deleteMessage(b -> b.queueUrl(url("mine-work")).receiptHandle(got.get(0).receiptHandle()));
        }
        sqs.createQueue(b -> b.queueName("sly-target"));
        int throttled = 0;
        try (SqsClient sly = SqsClients.client(server.endpoint(), "sly", "sly-secret", false)) {
            for (int i = 0; i < 10; i++) {
                try {
                    sly.sendMessage(b -> b.queueUrl(url("sly-target")).messageBody("hurry"));
                } catch (software.amazon.awssdk.services.sqs.model.SqsException e) {
                    assertEquals("RequestThrottled", e.awsErrorDetails().errorCode(), e.toString());
                    throttled++;
                }
            }
        }
        assertTrue(throttled > 0, "2 requests a second, 10 sent at once");
        WebDriver driver = ConsoleSession.browser();
        try {
            signIn(driver, base, SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
            driver.get(base + "/console/queues/mine-work");
            By row = By.xpath("//table[@id='consumers']/tbody/tr[td[1][text()='mine']]");
            assertEquals("127.0.0.1", text(driver, By.xpath("//table[@id='consumers']/tbody/tr[td[1][text()='mine']]"
                    + "/td[2]")));
            assertEquals("2", text(driver, By.xpath("//table[@id='consumers']/tbody/tr[td[1][text()='mine']]/td[5]")),
                    "3 received, 1 deleted: 2 held");
            assertTrue(text(driver, row).contains("ago") || text(driver, row).contains("just now"));
            ((org.openqa.selenium.JavascriptExecutor) driver).executeScript("arguments[0].scrollIntoView()",
                    driver.findElement(By.id("consumers")));
            ConsoleSession.screenshot(driver, "consumers");

            follow(driver, By.linkText("Usage"));
            int slowed = throttled;
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> Integer.parseInt(text(driver,
                    By.xpath("//table[@id='usage']/tbody/tr[td[1][text()='sly']]/td[4]")).replace(",", "")) >= slowed);
            assertTrue(Integer.parseInt(text(driver, By.xpath("//table[@id='usage']/tbody/tr[td[1][text()='mine']]"
                    + "/td[2]")).replace(",", "")) >= 2, "mine's receives and delete");
            ConsoleSession.screenshot(driver, "usage");
            follow(driver, By.id("sign-out"));
            signIn(driver, base, "mine", "mine-secret");
            driver.get(base + "/console/usage");
            assertEquals(List.of("mine"), texts(driver, By.cssSelector("#usage td.key")), "a key sees its own usage");
        } finally {
            driver.quit();
        }
    }

    /**
     * Issue 47, item 5: a FIFO queue created from the console with a dead-letter queue picked from the list and a
     * tag, seen through the API; a tag added and removed; the queue deleted only with its name typed, then gone from
     * the API too.
     */
    @Test
    void aQueueIsCreatedTaggedAndDeletedFromTheConsole() throws Exception {
        sqs.createQueue(b -> b.queueName("made-dlq.fifo").attributesWithStrings(Map.of("FifoQueue", "true")));
        WebDriver driver = ConsoleSession.browser();
        try {
            signIn(driver, base, SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
            driver.findElement(By.cssSelector("#create-queue summary")).click();
            driver.findElement(By.id("create-name")).sendKeys("made.fifo");
            new org.openqa.selenium.support.ui.Select(driver.findElement(By.id("create-type"))).selectByValue("fifo");
            driver.findElement(By.id("create-VisibilityTimeout")).sendKeys("45");
            driver.findElement(By.id("create-dlq")).sendKeys("made-dlq.fifo");
            driver.findElement(By.id("create-max-receives")).sendKeys("4");
            driver.findElement(By.id("create-tags")).sendKeys("team=payments");
            ((org.openqa.selenium.JavascriptExecutor) driver).executeScript("arguments[0].scrollIntoView()",
                    driver.findElement(By.id("create-queue")));
            ConsoleSession.screenshot(driver, "create-queue");
            follow(driver, By.id("create"));
            assertEquals("Queue created.", driver.findElement(By.id("done")).getText());
            Map<String, String> a = sqs.getQueueAttributes(b -> b.queueUrl(url("made.fifo")).attributeNames(
                    QueueAttributeName.ALL)).attributesAsStrings();
            assertEquals("true", a.get("FifoQueue"));
            assertEquals("45", a.get("VisibilityTimeout"));
            assertTrue(a.get("RedrivePolicy").contains(":made-dlq.fifo\"") && a.get("RedrivePolicy")
                    .matches(".*\"maxReceiveCount\":\"?4\"?[,}].*"), a.get("RedrivePolicy"));
            assertEquals(Map.of("team", "payments"), sqs.listQueueTags(b -> b.queueUrl(url("made.fifo"))).tags());
            assertEquals("made-dlq.fifo", text(driver, By.id("dlq-target")), "a link to it");

            driver.findElement(By.id("tag-key")).sendKeys("tier");
            driver.findElement(By.id("tag-value")).sendKeys("gold");
            follow(driver, By.id("add-tag"));
            assertEquals(Map.of("team", "payments", "tier", "gold"), sqs.listQueueTags(b -> b.queueUrl(
                    url("made.fifo"))).tags());
            follow(driver, By.xpath("//table[@id='tags']//tr[td[text()='team']]//button"));
            assertEquals(Map.of("tier", "gold"), sqs.listQueueTags(b -> b.queueUrl(url("made.fifo"))).tags());

            driver.findElement(By.id("confirm-delete")).sendKeys("made");
            follow(driver, By.id("delete-queue"));
            assertTrue(driver.findElement(By.id("problem")).getText().contains("Not deleted"));
            assertEquals("made.fifo", sqs.getQueueUrl(b -> b.queueName("made.fifo")).queueUrl()
                    .replaceAll(".*/", ""), "still there");
            driver.findElement(By.id("confirm-delete")).sendKeys("made.fifo");
            follow(driver, By.id("delete-queue"));
            assertEquals("Queue deleted.", driver.findElement(By.id("done")).getText());
            assertTrue(driver.getCurrentUrl().contains("/console/queues"), driver.getCurrentUrl());
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                try {
                    sqs.getQueueUrl(b -> b.queueName("made.fifo"));
                    return false;
                } catch (software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException gone) {
                    return true;
                }
            });

            // a refused creation shows the API's error and keeps what was typed
            driver.findElement(By.cssSelector("#create-queue summary")).click();
            driver.findElement(By.id("create-name")).sendKeys("bad name!");
            follow(driver, By.id("create"));
            assertTrue(driver.findElement(By.id("problem")).getText().startsWith("InvalidParameterValue"),
                    driver.findElement(By.id("problem")).getText());
            assertEquals("bad name!", driver.findElement(By.id("create-name")).getAttribute("value"));
        } finally {
            driver.quit();
        }
    }

    /**
     * Reads what {@code by} finds in a live region (reloaded in place every second here), reading again from the
     * new region when it was replaced between finding and reading.
     */
    private static <T> T live(WebDriver driver, By by, java.util.function.Function<List<WebElement>, T> read) {
        for (int attempt = 1; ; attempt++) {
            try {
                return read.apply(driver.findElements(by));
            } catch (org.openqa.selenium.StaleElementReferenceException replaced) {
                if (attempt == 5) {
                    throw replaced;
                }
            }
        }
    }

    private static String text(WebDriver driver, By by) {
        return live(driver, by, found -> {
            if (found.isEmpty()) {
                throw new org.openqa.selenium.NoSuchElementException(by.toString());
            }
            return found.get(0).getText();
        });
    }

    private static String attribute(WebDriver driver, By by, String name) {
        return live(driver, by, found -> found.get(0).getAttribute(name));
    }

    private static List<String> texts(WebDriver driver, By by) {
        return live(driver, by, found -> found.stream().map(WebElement::getText).toList());
    }

    /**
     * A cell of the queue list's row of {@code queue}. The list reloads in place (every second here): a cell read
     * as its table is replaced is read again from the new one.
     */
    private static String cell(WebDriver driver, String queue, int column) {
        return text(driver, By.xpath("//table[@id='queues']/tbody/tr[td[1]/a[text()='" + queue + "']]/td[" + column
                + "]"));
    }

    /**
     * Issue 42, item 6: login CSRF by cookie tossing. A page on another port of the same host (cookies ignore ports;
     * SameSite counts every port as one site) sets the console's sign-in cookie to a value it knows and posts the
     * sign-in form with its own key: the victim's browser must not end up signed in as the attacker. The post comes
     * from another origin and is refused; the console's own sign-in still works in the same browser.
     */
    @Test
    void aPageOnAnotherPortCannotSignTheBrowserInAsItsKey() throws Exception {
        int adminPort = server.adminEndpoint().getPort();
        com.sun.net.httpserver.HttpServer attacker = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        byte[] page = ("<html><body><script>document.cookie = 'sluice_console_login=tossed; path=/console';</script>"
                + "<form id='f' method='post' action='http://127.0.0.1:" + adminPort + "/console/login'>"
                + "<input name='csrf' value='tossed'><input name='access_key' value='mine'>"
                + "<input name='secret_key' value='mine-secret'></form>"
                + "<script>document.getElementById('f').submit();</script></body></html>")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        attacker.createContext("/", exchange -> {
            exchange.getResponseHeaders().add("Content-Type", "text/html; charset=utf-8");
            exchange.sendResponseHeaders(200, page.length);
            exchange.getResponseBody().write(page);
            exchange.close();
        });
        attacker.start();
        WebDriver driver = ConsoleSession.browser();
        try {
            driver.get("http://127.0.0.1:" + attacker.getAddress().getPort() + "/");
            await().atMost(Duration.ofSeconds(30)).until(() -> driver.getCurrentUrl().contains(":" + adminPort + "/"));
            assertTrue(driver.getPageSource().contains("posted from another site"), driver.getPageSource());
            driver.get(base + "/console/queues");
            assertTrue(driver.getCurrentUrl().endsWith("/console/login"), "signed in by another site's page: "
                    + driver.getCurrentUrl());
            signIn(driver, base, SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
            assertTrue(driver.getCurrentUrl().endsWith("/console/queues"), "the console's own sign-in: "
                    + driver.getCurrentUrl());
        } finally {
            driver.quit();
            attacker.stop(0);
        }
    }

    @Test
    void aBrowserSignsInListsSendsPurgesAndSeesTheCluster() throws Exception {
        sqs.createQueue(b -> b.queueName("shop"));
        for (int i = 0; i < 5; i++) {
            int n = i;
            sqs.sendMessage(b -> b.queueUrl(url("shop")).messageBody("item " + n));
        }
        WebDriver driver = ConsoleSession.browser();
        try {
            driver.get(base + "/console/login");
            ConsoleSession.screenshot(driver, "sign-in");
            signIn(driver, base, SluiceProcess.ACCESS_KEY, "wrong-secret");
            assertTrue(driver.findElement(By.className("error")).getText().contains("Sign-in refused"));
            assertTrue(driver.getCurrentUrl().endsWith("/console/login"));

            signIn(driver, base, SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
            assertTrue(driver.getCurrentUrl().endsWith("/console/queues"), driver.getCurrentUrl());
            // the list's figures are a sample at most 2 s old when the page was asked for, then reloaded in place
            await().atMost(Duration.ofSeconds(30)).until(() -> cell(driver, "shop", 4).equals("5"));
            assertEquals("orders-dlq", cell(driver, "orders", 10), "dead-letter target");
            assertEquals("orders", cell(driver, "orders-dlq", 11), "dead-letter sources");
            assertEquals("FIFO", cell(driver, "events.fifo", 2));
            ConsoleSession.screenshot(driver, "queues");
            driver.get(base + "/console/queues?sort=visible"); // the "Visible" header's link (the page reloads itself)
            List<String> names = texts(driver, By.xpath("//table[@id='queues']/tbody/tr/td[1]"));
            assertTrue(names.indexOf("shop") < names.indexOf("orders") && names.indexOf("orders") < names.indexOf(
                    "events.fifo"), "sorted by visible messages, most first (5, 3, 0): " + names);

            follow(driver, By.linkText("shop"));
            assertEquals("5", text(driver, By.id("attr-ApproximateNumberOfMessages")));
            // the charts draw what the node sampled and the shard recorded (the shard records at its start)
            await().atMost(Duration.ofSeconds(120)).until(() -> {
                driver.navigate().refresh();
                return !driver.findElements(By.cssSelector("#depth-chart canvas")).isEmpty()
                        && !driver.findElements(By.cssSelector("#age-chart canvas")).isEmpty();
            });
            // issue 47, item 6: a range picked is drawn and kept by the browser across reloads
            assertEquals("3600", attribute(driver, By.id("depth-chart"), "data-range"), "an hour by default");
            driver.findElement(By.id("range-86400")).click();
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> "86400".equals(attribute(driver,
                    By.id("depth-chart"), "data-range")) && "86400".equals(attribute(driver, By.id("rate-chart"),
                    "data-range")));
            driver.navigate().refresh();
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> "86400".equals(attribute(driver,
                    By.id("depth-chart"), "data-range")));
            assertTrue(driver.findElement(By.id("range-86400")).getAttribute("class").contains("active"));
            ((org.openqa.selenium.JavascriptExecutor) driver).executeScript("arguments[0].scrollIntoView()",
                    driver.findElement(By.id("ranges")));
            ConsoleSession.screenshot(driver, "charts-day");
            driver.findElement(By.id("range-3600")).click();
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> "3600".equals(attribute(driver,
                    By.id("depth-chart"), "data-range")));
            driver.findElement(By.id("body")).sendKeys("sent from the console");
            follow(driver, By.id("send"));
            assertEquals("Message sent.", driver.findElement(By.id("done")).getText());
            assertEquals("6", text(driver, By.id("attr-ApproximateNumberOfMessages")));
            ConsoleSession.screenshot(driver, "queue");
            List<String> bodies = new java.util.ArrayList<>();
            await().atMost(Duration.ofSeconds(120)).until(() -> {
                sqs.receiveMessage(b -> b.queueUrl(url("shop")).maxNumberOfMessages(10).waitTimeSeconds(1))
                        .messages().stream().map(Message::body).forEach(bodies::add);
                return bodies.contains("sent from the console");
            });

            driver.findElement(By.id("confirm")).sendKeys("not-shop");
            follow(driver, By.id("purge"));
            assertTrue(driver.findElement(By.id("problem")).getText().contains("Not purged"));
            assertEquals(6, messages("shop"), "a wrong confirmation purges nothing");
            driver.findElement(By.id("confirm")).sendKeys("shop");
            follow(driver, By.id("purge"));
            assertEquals("Queue purged.", driver.findElement(By.id("done")).getText());
            await().atMost(Duration.ofSeconds(120)).until(() -> messages("shop") == 0);

            follow(driver, By.linkText("Cluster"));
            assertEquals("alive", text(driver, By.xpath("//table[@id='backends']/tbody/tr[1]/td[3]")));
            ConsoleSession.screenshot(driver, "cluster");
            assertTrue(driver.findElements(By.id("rebalance")).isEmpty(), "rebalancing needs the admin token");

            driver.manage().window().setSize(new Dimension(390, 844)); // a phone
            follow(driver, By.linkText("Queues"));
            boolean shown = live(driver, By.linkText("shop"), f -> f.get(0).isDisplayed());
            assertTrue(shown, "shop listed");
            ConsoleSession.screenshot(driver, "queues-phone");
            org.openqa.selenium.JavascriptExecutor js = (org.openqa.selenium.JavascriptExecutor) driver;
            // the list fits the phone's width: its right edge is on screen, names are not broken into letters
            assertTrue(((Number) js.executeScript("return document.getElementById('queues')"
                    + ".getBoundingClientRect().right")).doubleValue() <= ((Number) js.executeScript(
                    "return document.documentElement.clientWidth")).doubleValue(), "the queue table is cut");
            int oneLine = live(driver, By.linkText("events.fifo"), f -> f.get(0).getSize().getHeight());
            assertEquals(oneLine, (int) live(driver, By.linkText("shop"), f -> f.get(0).getSize().getHeight()),
                    "a name on one line");
            follow(driver, By.linkText("shop"));
            assertTrue(((Number) js.executeScript("return document.documentElement.scrollWidth - "
                    + "document.documentElement.clientWidth")).doubleValue() <= 0, "the queue page fits the phone");
            ConsoleSession.screenshot(driver, "queue-phone");
            follow(driver, By.linkText("Cluster"));
            ConsoleSession.screenshot(driver, "cluster-phone");
            follow(driver, By.linkText("Usage"));
            assertTrue(((Number) js.executeScript("return document.documentElement.scrollWidth - "
                    + "document.documentElement.clientWidth")).doubleValue() <= 0, "the usage page fits the phone");
            ConsoleSession.screenshot(driver, "usage-phone");

            follow(driver, By.id("sign-out"));
            assertTrue(driver.getCurrentUrl().endsWith("/console/login"));
            ConsoleSession.screenshot(driver, "sign-in-phone");
            driver.manage().window().setSize(new Dimension(1280, 900));
            driver.get(base + "/console/queues");
            assertTrue(driver.getCurrentUrl().endsWith("/console/login"), "signed out: back to the sign-in");

            signIn(driver, base, "mine", "mine-secret");
            List<String> listed = texts(driver, By.xpath("//table[@id='queues']/tbody/tr/td[1]"));
            assertTrue(listed.contains("mine-jobs") && listed.stream().allMatch(n -> n.startsWith("mine-")),
                    "a limited key lists only its queues: " + listed);
            assertTrue(driver.findElements(By.linkText("Cluster")).isEmpty(), "no cluster page for it");
            driver.get(base + "/console/queues/orders");
            assertTrue(driver.findElement(By.id("problem")).getText().startsWith("AccessDenied"));
        } finally {
            driver.quit();
        }
    }
}
