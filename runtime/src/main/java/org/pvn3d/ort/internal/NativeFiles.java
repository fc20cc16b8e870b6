package org.pvn3d.ort.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLConnection;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.jar.JarEntry;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;

/**
 * Native files shipped as class-path resources, extracted once into a per-version cache folder.
 *
 * <p>Each file is written to a unique temporary name in the cache folder and then renamed into place
 * atomically, so two JVMs starting at once never see a half-written library: the loser's rename
 * replaces an identical file, which is harmless to a process that has the old one mapped.
 */
public final class NativeFiles {
    /** System property and environment variable naming the cache root. */
    public static final String CACHE_PROPERTY = "pvn3d.cache.dir";
    public static final String CACHE_ENV = "PVN3D_CACHE_DIR";

    private NativeFiles() {}

    /** The folder this platform's resources live under, e.g. {@code linux-x64}. */
    public static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osPart = os.contains("linux") ? "linux" : os.contains("mac") ? "osx" : os.contains("win") ? "win" : os;
        String archPart = switch (arch) {
            case "amd64", "x86_64" -> "x64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
        return osPart + "-" + archPart;
    }

    /**
     * A setting read from a system property, else an environment variable.
     *
     * @param value  the value, null when neither is set (a blank value counts as not set)
     * @param source where it came from, for messages: {@code system property NAME} or
     *               {@code environment variable NAME}; null when not set
     */
    public record Setting(String value, String source) {
        /** Whether the property or the variable gave a value. */
        public boolean isSet() {
            return value != null;
        }
    }

    /** The system property {@code property} if set (not blank), else the environment variable {@code env}. */
    public static Setting setting(String property, String env) {
        String value = System.getProperty(property);
        if (value != null && !value.isBlank()) {
            return new Setting(value, "system property " + property);
        }
        value = System.getenv(env);
        if (value != null && !value.isBlank()) {
            return new Setting(value, "environment variable " + env);
        }
        return new Setting(null, null);
    }

    /** Where native files are extracted: {@value #CACHE_PROPERTY} or {@value #CACHE_ENV}, else the user's cache folder. */
    public static Path cacheRoot() {
        Setting configured = setting(CACHE_PROPERTY, CACHE_ENV);
        if (configured.isSet()) {
            return Path.of(configured.value());
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("pvn3d-ort");
    }

    /**
     * Extracts the class-path resource {@code resource} of {@code loader} to {@code dir/name} unless a
     * file of the same size is already there, and returns its path. A resource that is a plain file (a
     * class-path folder rather than a jar) is used where it is.
     */
    public static Path extract(ClassLoader loader, String resource, Path dir, String name) {
        Path target = dir.resolve(name);
        URL url = loader.getResource(resource);
        if (url == null) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "no class-path resource " + resource);
        }
        if ("file".equals(url.getProtocol())) {
            // a class-path folder (a development build): the file is already on disk, use it in place
            try {
                return Path.of(url.toURI());
            } catch (URISyntaxException | IllegalArgumentException e) {
                // fall through to a copy
            }
        }
        try {
            URLConnection connection = url.openConnection();
            connection.setUseCaches(false);
            long size = connection.getContentLengthLong();
            if (Files.isRegularFile(target) && size >= 0 && Files.size(target) == size) {
                return target;
            }
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, name + ".", ".part");
            try (InputStream in = connection.getInputStream()) {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(tmp);
            }
            return target;
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE,
                    "cannot extract " + resource + " (" + url + ") to " + target + ": " + e, e);
        }
    }

    /**
     * The CRC-32 of a jar entry as 8 hex digits (read from the jar's directory, without reading the
     * entry), to name cache folders so that two builds of one file never share one; "nocrc" where the
     * URL is not a jar entry (a class-path folder during development).
     */
    public static String crc(URL url) {
        try {
            if (url.openConnection() instanceof JarURLConnection jarConnection) {
                jarConnection.setUseCaches(false);
                JarEntry entry = jarConnection.getJarEntry();
                if (entry != null && entry.getCrc() >= 0) {
                    return String.format("%08x", entry.getCrc());
                }
            }
        } catch (IOException e) {
            // only names a cache folder
        }
        return "nocrc";
    }

    /**
     * Checks that {@code file} is an ELF shared object for this JVM's architecture, and for a 64-bit one
     * that it is whole (every segment the loader maps, and the section table, inside the file), so that a
     * wrong build or a truncated download fails with a message instead of a loader error or a crash (the
     * dynamic loader maps a truncated file and dies with SIGBUS on the missing pages).
     */
    public static void checkElfArchitecture(Path file) {
        ByteBuffer header = ByteBuffer.allocate(64);
        long size;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            size = ch.size();
            while (header.hasRemaining() && ch.read(header) > 0) {
                // read the ELF header
            }
            header.flip();
            if (header.remaining() < 20 || header.get(0) != 0x7f || header.get(1) != 'E' || header.get(2) != 'L'
                    || header.get(3) != 'F') {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, file + " is not an ELF shared library");
            }
            if (header.get(4) == 2) { // ELFCLASS64
                checkElf64Whole(file, ch, header.order(header.get(5) == 1 ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN), size);
            }
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot read " + file + ": " + e, e);
        }
        boolean littleEndian = header.get(5) == 1;
        int machine = littleEndian
                ? (header.get(18) & 0xff) | (header.get(19) & 0xff) << 8
                : (header.get(19) & 0xff) | (header.get(18) & 0xff) << 8;
        String arch = System.getProperty("os.arch");
        int expected = switch (arch) {
            case "amd64", "x86_64" -> 62;
            case "aarch64" -> 183;
            default -> -1;
        };
        if (expected >= 0 && machine != expected) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, file + " is built for ELF machine "
                    + elfMachineName(machine) + ", but this JVM runs on " + arch);
        }
    }

    /** The 64-bit ELF header's tables and every loadable segment lie inside the file's {@code size} bytes. */
    private static void checkElf64Whole(Path file, FileChannel ch, ByteBuffer header, long size) throws IOException {
        if (header.remaining() < 64) {
            throw truncated(file, size, 64);
        }
        long phoff = header.getLong(0x20), shoff = header.getLong(0x28);
        int phentsize = header.getShort(0x36) & 0xffff, phnum = header.getShort(0x38) & 0xffff;
        int shentsize = header.getShort(0x3a) & 0xffff, shnum = header.getShort(0x3c) & 0xffff;
        long phEnd = phoff + (long) phentsize * phnum, shEnd = shoff + (long) shentsize * shnum;
        if (phoff < 0 || phEnd > size || shoff < 0 || shEnd > size) {
            throw truncated(file, size, Math.max(phEnd, shEnd));
        }
        if (phentsize < 56 || phnum == 0) {
            return;
        }
        ByteBuffer ph = ByteBuffer.allocate(phentsize * phnum).order(header.order());
        ch.position(phoff);
        while (ph.hasRemaining() && ch.read(ph) > 0) {
            // the program headers
        }
        for (int i = 0; i < phnum; i++) {
            int at = i * phentsize;
            if (ph.getInt(at) == 1) { // PT_LOAD: p_offset + p_filesz bytes are mapped from the file
                long end = ph.getLong(at + 8) + ph.getLong(at + 32);
                if (end > size || end < 0) {
                    throw truncated(file, size, end);
                }
            }
        }
    }

    private static OrtException truncated(Path file, long size, long needed) {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, file + " is cut short (" + size + " bytes, its ELF headers "
                + "need " + needed + "): an incomplete copy or download");
    }

    private static String elfMachineName(int machine) {
        return switch (machine) {
            case 62 -> "x86-64";
            case 183 -> "aarch64";
            case 3 -> "i386";
            case 40 -> "arm";
            case 21 -> "ppc64";
            default -> "#" + machine;
        };
    }
}
