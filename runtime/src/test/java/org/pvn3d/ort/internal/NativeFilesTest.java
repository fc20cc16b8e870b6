package org.pvn3d.ort.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** A setting from a system property, else an environment variable, and where it came from. */
class NativeFilesTest {
    private static final String PROPERTY = "pvn3d.test.setting";

    @Test
    void thePropertyComesFirstThenTheVariable() {
        String path = System.getenv("PATH"); // a variable every test machine has
        try {
            System.setProperty(PROPERTY, "/from/property");
            assertEquals(new NativeFiles.Setting("/from/property", "system property " + PROPERTY), NativeFiles.setting(PROPERTY, "PATH"));
            System.setProperty(PROPERTY, "  ");
            assertEquals(new NativeFiles.Setting(path, "environment variable PATH"), NativeFiles.setting(PROPERTY, "PATH"),
                    "a blank property counts as not set");
        } finally {
            System.clearProperty(PROPERTY);
        }
        NativeFiles.Setting none = NativeFiles.setting(PROPERTY, "PVN3D_TEST_SETTING_NOT_SET");
        assertFalse(none.isSet());
        assertNull(none.source());
    }
}
