/*
 * A broker metrics reporter that accepts client telemetry (KIP-714) and writes each
 * payload to a file, for aiokafka's tests (tests/integration/test_telemetry.py).
 *
 * Kafka offers GetTelemetrySubscriptions/PushTelemetry only when a metrics reporter
 * implements the client-telemetry interface; in 4.3 that is
 * ClientTelemetryExporterProvider (ClientTelemetry is deprecated). Configure with
 *
 *   metric.reporters=aiokafka.test.FileTelemetryExporter
 *   aiokafka.telemetry.dir=/path/to/dir
 *
 * Each push becomes <dir>/<sequence>.push: one header line of tab-separated
 * key=value pairs (received_ms, client_instance_id, terminating, content_type,
 * push_interval_ms, client_id), then the payload bytes as the broker decoded them
 * (decompressed OTLP MetricsData). The file is written under a temporary name and
 * renamed, so a reader never sees half of one.
 */
package aiokafka.test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.server.telemetry.ClientTelemetryContext;
import org.apache.kafka.server.telemetry.ClientTelemetryExporter;
import org.apache.kafka.server.telemetry.ClientTelemetryExporterProvider;
import org.apache.kafka.server.telemetry.ClientTelemetryPayload;

public class FileTelemetryExporter implements MetricsReporter, ClientTelemetryExporterProvider {
    public static final String DIR_CONFIG = "aiokafka.telemetry.dir";

    private final AtomicLong sequence = new AtomicLong();
    private volatile Path dir;

    @Override
    public void configure(Map<String, ?> configs) {
        Object value = configs.get(DIR_CONFIG);
        if (value == null) {
            throw new IllegalArgumentException(DIR_CONFIG + " is required");
        }
        dir = Paths.get(value.toString());
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot create " + dir, e);
        }
    }

    @Override
    public void init(List<KafkaMetric> metrics) {
    }

    @Override
    public void metricChange(KafkaMetric metric) {
    }

    @Override
    public void metricRemoval(KafkaMetric metric) {
    }

    @Override
    public void close() {
    }

    @Override
    public ClientTelemetryExporter clientTelemetryExporter() {
        return this::write;
    }

    private void write(ClientTelemetryContext context, ClientTelemetryPayload payload) {
        ByteBuffer data = payload.data().duplicate();
        byte[] body = new byte[data.remaining()];
        data.get(body);
        String header = "received_ms=" + System.currentTimeMillis()
            + "\tclient_instance_id=" + payload.clientInstanceId()
            + "\tterminating=" + payload.isTerminating()
            + "\tcontent_type=" + payload.contentType()
            + "\tpush_interval_ms=" + context.pushIntervalMs()
            + "\tclient_id=" + context.authorizableRequestContext().clientId()
            + "\n";
        byte[] head = header.getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[head.length + body.length];
        System.arraycopy(head, 0, out, 0, head.length);
        System.arraycopy(body, 0, out, head.length, body.length);
        String name = String.format("%08d.push", sequence.incrementAndGet());
        try {
            Path tmp = dir.resolve(name + ".tmp");
            Files.write(tmp, out);
            Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new RuntimeException("cannot write " + name, e);
        }
    }
}
