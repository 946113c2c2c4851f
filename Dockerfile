# One image for every Mailroom service; the command picks the role (see docker-compose.yml).
# Build stage: the Maven wrapper fetches Maven itself, so only a JDK is needed.
FROM eclipse-temurin:21.0.5_11-jdk AS build
WORKDIR /src
COPY . .
RUN ./mvnw -B -q -DskipTests package

FROM eclipse-temurin:21.0.5_11-jre
RUN useradd --system --uid 10001 mailroom
WORKDIR /app
COPY --from=build /src/examples/order-service/target/order-service.jar /app/order-service.jar
COPY --from=build /src/mailroom-service/target/mailroom.jar /app/mailroom.jar
# the example shop's email templates (Mailroom ships only layouts) and its thin jar, whose LegacyOrderPayload lets a
# dispatcher still send order documents the shop queued before the email API (docker-compose.yml's dispatcher)
COPY --from=build /src/examples/order-service/templates /app/shop-templates
COPY --from=build /src/examples/order-service/target/mailroom-example-order-service-*.jar /app/shop-readers.jar
USER mailroom
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75"
EXPOSE 8081 8082 8083 8084
# docker compose's healthchecks run `java -jar /app/mailroom.jar health URL` (no curl or wget needed)
CMD ["java", "-jar", "/app/order-service.jar"]
