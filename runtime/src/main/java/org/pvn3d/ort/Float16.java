package org.pvn3d.ort;

/** Conversions between {@code float} and the 16-bit formats ORT uses (IEEE half and bfloat16). */
public final class Float16 {
    private Float16() {}

    /** IEEE 754 half precision bits to float (exact). */
    public static float halfToFloat(short bits) {
        return Float.float16ToFloat(bits);
    }

    /** Float to IEEE 754 half precision bits (round to nearest even). */
    public static short floatToHalf(float value) {
        return Float.floatToFloat16(value);
    }

    /** bfloat16 bits to float (exact: bfloat16 is the top half of a float). */
    public static float bfloat16ToFloat(short bits) {
        return Float.intBitsToFloat((bits & 0xffff) << 16);
    }

    /** Float to bfloat16 bits, rounding to nearest even; NaN stays a (quiet) NaN. */
    public static short floatToBfloat16(float value) {
        int bits = Float.floatToRawIntBits(value);
        if (Float.isNaN(value)) {
            return (short) ((bits >>> 16) | 0x0040);
        }
        int rounding = 0x7fff + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }
}
