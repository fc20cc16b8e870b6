package org.pvn3d.ort.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OrtException;

/** The one lifetime mechanism: the owner, uses in flight and holds, without any native library. */
class RefCountTest {
    final AtomicInteger released = new AtomicInteger();

    RefCount refs() {
        return new RefCount(MemorySegment.ofAddress(0x1000), h -> released.incrementAndGet(),
                () -> new OrtException("thing is closed"));
    }

    @Test
    void theOwnersCloseReleasesOnceAndRefusesLaterUses() {
        RefCount r = refs();
        try (Lease use = r.acquire()) {
            assertEquals(0x1000, use.handle().address());
        }
        r.close();
        r.close();
        assertEquals(1, released.get());
        assertTrue(r.isClosed() && r.isReleased());
        OrtException e = assertThrows(OrtException.class, r::acquire);
        assertTrue(e.getMessage().contains("thing is closed"), e.getMessage());
        assertThrows(OrtException.class, r::retain);
        assertThrows(OrtException.class, r::handle);
    }

    @Test
    void holdsKeepTheHandleBeyondTheOwnersCloseAndTheLastOneReleasesIt() {
        RefCount r = refs();
        Lease a = r.retain();
        Lease b = r.retain();
        r.close();
        assertEquals(0, released.get(), "held twice");
        assertThrows(OrtException.class, r::retain, "no new holder once the owner closed");
        Lease c = r.retainUnlessReleased(); // a session of options that still hold it
        a.close();
        a.close(); // idempotent: does not end b's hold
        b.close();
        assertEquals(0, released.get());
        try (Lease late = r.acquireUnlessReleased()) {
            assertEquals(0x1000, late.handle().address());
        }
        c.close();
        assertEquals(1, released.get());
        assertThrows(OrtException.class, r::retainUnlessReleased);
        assertThrows(OrtException.class, r::acquireUnlessReleased);
    }

    @Test
    void closeWaitsForTheUseInFlight() throws Exception {
        RefCount r = refs();
        CountDownLatch inUse = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        AtomicInteger releasedDuringUse = new AtomicInteger(-1);
        Thread user = new Thread(() -> {
            try (Lease use = r.acquire()) {
                inUse.countDown();
                finish.await();
                releasedDuringUse.set(released.get());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        user.start();
        assertTrue(inUse.await(10, TimeUnit.SECONDS));
        Thread closer = new Thread(r::close);
        closer.start();
        closer.join(200);
        assertTrue(closer.isAlive(), "close waits while a use is in flight");
        finish.countDown();
        closer.join(10_000);
        user.join(10_000);
        assertFalse(closer.isAlive());
        assertEquals(0, releasedDuringUse.get(), "the handle was not released under the use");
        assertEquals(1, released.get());
    }

    @Test
    void usesWithoutALeaseAreWaitedForAndRefusedAfterClose() throws Exception {
        RefCount r = refs();
        r.enter();
        Thread closer = new Thread(r::close);
        closer.start();
        closer.join(200);
        assertTrue(closer.isAlive(), "close waits for the use begun with enter()");
        assertFalse(r.tryEnter(), "no new use once the owner is closing");
        assertEquals(0, released.get());
        r.exit();
        closer.join(10_000);
        assertFalse(closer.isAlive());
        assertEquals(1, released.get());
        assertThrows(OrtException.class, r::enter);
    }

    @Test
    void theLastHoldWaitsForAUseBegunAfterTheOwnersClose() throws Exception {
        RefCount r = refs();
        Lease hold = r.retain();
        r.close();
        Lease late = r.acquireUnlessReleased();
        Thread ender = new Thread(hold::close);
        ender.start();
        ender.join(200);
        assertTrue(ender.isAlive(), "the release waits for the use in flight");
        assertEquals(0, released.get());
        late.close();
        ender.join(10_000);
        assertFalse(ender.isAlive());
        assertEquals(1, released.get());
    }
}
