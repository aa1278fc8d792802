// The Apache Kafka Java client as an interop peer for the tests (driven by
// tools/javaclient/__init__.py). One JVM run handles a whole batch of jobs because JVM
// start-up dominates on small machines.
//
//   java Interop produce < {"bootstrap": "...", "jobs": [{"topic", "compression",
//        "idempotent", "records": [{"partition", "key", "value", "headers": [[k, v]],
//        "timestamp"}]}]}
//     prints one JSON line per record sent: {"topic", "partition", "offset", "timestamp"}
//   java Interop consume < {"bootstrap": "...", "timeout_ms": N, "jobs": [{"topic",
//        "partitions", "count"}]}
//     prints one JSON line per record read: {"topic", "partition", "offset", "key",
//     "value", "headers", "timestamp", "timestamp_type"}
//
// Keys, values and header values travel base64-encoded (null stays null) so arbitrary
// bytes survive the JSON hop.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class Interop {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Base64.Encoder B64E = Base64.getEncoder();
    private static final Base64.Decoder B64D = Base64.getDecoder();

    private Interop() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: Interop produce|consume < spec.json");
            System.exit(2);
        }
        JsonNode spec = JSON.readTree(System.in);
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        switch (args[0]) {
            case "produce" -> produce(spec, out);
            case "consume" -> consume(spec, out);
            default -> {
                System.err.println("unknown command " + args[0]);
                System.exit(2);
            }
        }
        out.flush();
    }

    private static byte[] bytes(JsonNode node) {
        return node == null || node.isNull() ? null : B64D.decode(node.asText());
    }

    private static String b64(byte[] data) {
        return data == null ? null : B64E.encodeToString(data);
    }

    private static void produce(JsonNode spec, PrintStream out) throws Exception {
        for (JsonNode job : spec.get("jobs")) {
            Properties props = new Properties();
            props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, spec.get("bootstrap").asText());
            props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, job.path("compression").asText("none"));
            boolean idempotent = job.path("idempotent").asBoolean(false);
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(idempotent));
            // Idempotence needs acks=all; without it, keep the Java defaults otherwise.
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
            props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
            String topic = job.get("topic").asText();
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            try (KafkaProducer<byte[], byte[]> producer =
                    new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
                for (JsonNode rec : job.get("records")) {
                    List<Header> headers = new ArrayList<>();
                    for (JsonNode h : rec.path("headers")) {
                        headers.add(new RecordHeader(h.get(0).asText(), bytes(h.get(1))));
                    }
                    Integer partition = rec.hasNonNull("partition") ? rec.get("partition").asInt() : null;
                    Long timestamp = rec.hasNonNull("timestamp") ? rec.get("timestamp").asLong() : null;
                    sent.add(producer.send(new ProducerRecord<>(
                            topic, partition, timestamp, bytes(rec.get("key")), bytes(rec.get("value")), headers)));
                }
                producer.flush();
                for (Future<RecordMetadata> future : sent) {
                    RecordMetadata md = future.get();
                    ObjectNode line = JSON.createObjectNode();
                    line.put("topic", md.topic());
                    line.put("partition", md.partition());
                    line.put("offset", md.offset());
                    line.put("timestamp", md.timestamp());
                    out.println(JSON.writeValueAsString(line));
                }
            }
        }
    }

    private static void consume(JsonNode spec, PrintStream out) throws Exception {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, spec.get("bootstrap").asText());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        long deadline = System.currentTimeMillis() + spec.path("timeout_ms").asLong(30000);
        List<TopicPartition> assignment = new ArrayList<>();
        Map<String, Integer> wanted = new HashMap<>();
        Map<String, Integer> seen = new HashMap<>();
        for (JsonNode job : spec.get("jobs")) {
            String topic = job.get("topic").asText();
            for (int p = 0; p < job.path("partitions").asInt(1); p++) {
                assignment.add(new TopicPartition(topic, p));
            }
            wanted.put(topic, job.get("count").asInt());
            seen.put(topic, 0);
        }
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(assignment);
            consumer.seekToBeginning(assignment);
            while (System.currentTimeMillis() < deadline && !done(wanted, seen)) {
                for (ConsumerRecord<byte[], byte[]> rec : consumer.poll(Duration.ofMillis(200))) {
                    seen.merge(rec.topic(), 1, Integer::sum);
                    ObjectNode line = JSON.createObjectNode();
                    line.put("topic", rec.topic());
                    line.put("partition", rec.partition());
                    line.put("offset", rec.offset());
                    line.put("key", b64(rec.key()));
                    line.put("value", b64(rec.value()));
                    ArrayNode headers = line.putArray("headers");
                    for (Header h : rec.headers()) {
                        headers.addArray().add(h.key()).add(b64(h.value()));
                    }
                    line.put("timestamp", rec.timestamp());
                    line.put("timestamp_type", rec.timestampType().id);
                    out.println(JSON.writeValueAsString(line));
                }
            }
        }
    }

    private static boolean done(Map<String, Integer> wanted, Map<String, Integer> seen) {
        for (Map.Entry<String, Integer> e : wanted.entrySet()) {
            if (seen.get(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }
}
