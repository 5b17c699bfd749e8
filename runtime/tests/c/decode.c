/*
 * Decodes a .skp through the C API and writes what it decoded, for the Rust test to
 * compare bit for bit with the Rust decoder:
 *
 *   decode FILE.skp OUT.bin [compact]
 *
 * (`compact` opens the file with skp_open_compact: the same poses, bit for bit.)
 * OUT.bin: joint count, clip count (u32); per joint: parent (i32), deforming (u8), rest (10
 * f32); per clip: frame count (u32), sample rate (f32); then, for every frame 0, 0.5, 1, ...
 * up to frame_count - 0.5, the pose by random access (joint count x 10 f32), then the same
 * frames by a forward cursor, then every 7th of them backwards by the cursor; then looping
 * (u8) and the root-motion joint (i32), and for a clip with root motion, the delta (7 f32)
 * from every frame 0, 0.5, ... to three quarters of the clip later (across the wrap of a
 * looping clip), from 0 to 100 cycles, and from 3.5 back to -2. Before looping, the clip's
 * events: count (u32), per event time (f32), name (u32 length, bytes), payload (u8 present,
 * then u32 length, bytes); for a clip with events, the events crossed (u64 count, then up
 * to 8 indices as u32) in steps of 0.3 frames (i * 0.3f to (i + 1) * 0.3f) over three
 * cycles, then from 0 to three cycles, then from three cycles back to 0. After the events,
 * the clip's scalar tracks (put_scalars).
 * On a file the library refuses: prints "skp_open: CODE: MESSAGE" and exits with 3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skelpack.h"

static void put(FILE *f, const void *p, size_t n) {
    if (fwrite(p, 1, n, f) != n) {
        perror("write");
        exit(1);
    }
}

static void check(SkpStatus s, const char *what) {
    if (s != SKP_OK) {
        fprintf(stderr, "%s: status %d\n", what, (int)s);
        exit(1);
    }
}

static void put_crossed(FILE *out, const SkpFile *file, uint32_t c, float a, float b) {
    uint32_t idx[8];
    uint64_t count = 0;
    check(skp_events_between(file, c, a, b, idx, 8, &count), "skp_events_between");
    put(out, &count, 8);
    put(out, idx, 4 * (size_t)(count < 8 ? count : 8));
}

/* The clip's scalar tracks: count (u32), per track targets (u32), name (u32 length, bytes),
 * error (f32), then its values (targets f32) at frames 0, 0.5, ... up to frame_count - 0.5,
 * at -3 and at frame_count + 2.5. */
static void put_scalars(FILE *out, const SkpFile *file, uint32_t c, const SkpClipInfo *info) {
    put(out, &info->scalar_track_count, 4);
    uint32_t steps = info->frame_count * 2;
    for (uint32_t i = 0; i < info->scalar_track_count; i++) {
        SkpScalarTrack t;
        check(skp_scalar_track_info(file, c, i, &t), "skp_scalar_track_info");
        put(out, &t.targets, 4);
        uint32_t n = (uint32_t)strlen(t.name);
        put(out, &n, 4);
        put(out, t.name, n);
        put(out, &t.max_error, 4);
        float *w = malloc(sizeof(float) * t.targets);
        if (t.targets > 1 &&
            skp_sample_scalar_track(file, c, i, 0.0f, w, t.targets - 1) !=
                SKP_ERROR_BUFFER_TOO_SMALL) {
            fprintf(stderr, "a short weights buffer was not refused\n");
            exit(1);
        }
        for (uint32_t s = 0; s < steps + 2; s++) {
            float f = s < steps ? 0.5f * (float)s
                      : s == steps ? -3.0f
                                   : (float)info->frame_count + 2.5f;
            check(skp_sample_scalar_track(file, c, i, f, w, t.targets), "skp_sample_scalar_track");
            put(out, w, sizeof(float) * t.targets);
        }
        free(w);
    }
    if (skp_scalar_track_info(file, c, info->scalar_track_count, &(SkpScalarTrack){0}) !=
        SKP_ERROR_OUT_OF_RANGE) {
        fprintf(stderr, "an out-of-range scalar track was not refused\n");
        exit(1);
    }
}

static void put_events(FILE *out, const SkpFile *file, uint32_t c, const SkpClipInfo *info) {
    put(out, &info->event_count, 4);
    for (uint32_t e = 0; e < info->event_count; e++) {
        SkpEvent ev;
        check(skp_event_info(file, c, e, &ev), "skp_event_info");
        put(out, &ev.time, 4);
        uint32_t n = (uint32_t)strlen(ev.name);
        put(out, &n, 4);
        put(out, ev.name, n);
        uint8_t has = ev.payload != NULL;
        put(out, &has, 1);
        if (has) {
            n = (uint32_t)strlen(ev.payload);
            put(out, &n, 4);
            put(out, ev.payload, n);
        }
    }
    if (skp_event_info(file, c, info->event_count, &(SkpEvent){0}) != SKP_ERROR_OUT_OF_RANGE) {
        fprintf(stderr, "an out-of-range event was not refused\n");
        exit(1);
    }
    if (info->event_count == 0) return;
    float span = 3.0f * (float)(info->frame_count - 1);
    for (uint32_t i = 0; 0.3f * (float)i < span; i++) {
        put_crossed(out, file, c, 0.3f * (float)i, 0.3f * (float)(i + 1));
    }
    put_crossed(out, file, c, 0.0f, span);
    put_crossed(out, file, c, span, 0.0f);
}

int main(int argc, char **argv) {
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "compact") == 0)) {
        fprintf(stderr, "usage: decode FILE.skp OUT.bin [compact]\n");
        return 1;
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        perror(argv[1]);
        return 1;
    }
    fseek(in, 0, SEEK_END);
    long len = ftell(in);
    fseek(in, 0, SEEK_SET);
    unsigned char *data = malloc(len > 0 ? (size_t)len : 1);
    if (!data || fread(data, 1, (size_t)len, in) != (size_t)len) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    fclose(in);

    SkpFile *file = NULL;
    SkpError error;
    SkpStatus s = argc == 4 ? skp_open_compact(data, (size_t)len, &file, &error)
                            : skp_open(data, (size_t)len, &file, &error);
    free(data); /* skp_open copied the bytes */
    if (s != SKP_OK) {
        printf("skp_open: %d: %s\n", (int)error.code, error.message);
        return file == NULL && error.code == s ? 3 : 1;
    }

    FILE *out = fopen(argv[2], "wb");
    if (!out) {
        perror(argv[2]);
        return 1;
    }
    uint32_t joints = skp_joint_count(file), clips = skp_clip_count(file);
    put(out, &joints, 4);
    put(out, &clips, 4);
    for (uint32_t j = 0; j < joints; j++) {
        SkpJointInfo info;
        check(skp_joint_info(file, j, &info), "skp_joint_info");
        if (strlen(info.name) > 65535) return 1;
        put(out, &info.parent, 4);
        put(out, &info.deforming, 1);
        put(out, &info.rest, sizeof(SkpTransform));
    }
    SkpTransform *pose = malloc(sizeof(SkpTransform) * joints);
    if (joints > 0 && skp_sample(file, 0, 0.0f, pose, joints - 1) != SKP_ERROR_BUFFER_TOO_SMALL) {
        fprintf(stderr, "a short buffer was not refused\n");
        return 1;
    }
    for (uint32_t c = 0; c < clips; c++) {
        SkpClipInfo info;
        check(skp_clip_info(file, c, &info), "skp_clip_info");
        put(out, &info.frame_count, 4);
        put(out, &info.sample_rate, 4);
        uint32_t steps = info.frame_count * 2;
        for (uint32_t i = 0; i < steps; i++) {
            check(skp_sample(file, c, 0.5f * (float)i, pose, joints), "skp_sample");
            put(out, pose, sizeof(SkpTransform) * joints);
        }
        SkpCursor *cursor = NULL;
        check(skp_cursor_create(file, c, &cursor), "skp_cursor_create");
        for (uint32_t i = 0; i < steps; i++) {
            check(skp_cursor_sample(cursor, 0.5f * (float)i, pose, joints), "skp_cursor_sample");
            put(out, pose, sizeof(SkpTransform) * joints);
        }
        for (uint32_t i = steps; i-- > 0;) {
            if ((steps - 1 - i) % 7 != 0) continue;
            check(skp_cursor_sample(cursor, 0.5f * (float)i, pose, joints), "skp_cursor_sample");
            put(out, pose, sizeof(SkpTransform) * joints);
        }
        skp_cursor_destroy(cursor);
        put_events(out, file, c, &info);
        put_scalars(out, file, c, &info);
        put(out, &info.looping, 1);
        put(out, &info.root_motion_joint, 4);
        SkpMotionDelta d;
        if (info.root_motion_joint < 0) {
            if (skp_root_motion_delta(file, c, 0.0f, 1.0f, &d) != SKP_ERROR_NO_ROOT_MOTION) {
                fprintf(stderr, "a clip without root motion gave a delta\n");
                return 1;
            }
            continue;
        }
        float later = 0.75f * (float)info.frame_count;
        for (uint32_t i = 0; i < steps; i++) {
            check(skp_root_motion_delta(file, c, 0.5f * (float)i, 0.5f * (float)i + later, &d),
                  "skp_root_motion_delta");
            put(out, &d, sizeof d);
        }
        check(skp_root_motion_delta(file, c, 0.0f, 100.0f * (float)(info.frame_count - 1), &d),
              "skp_root_motion_delta");
        put(out, &d, sizeof d);
        check(skp_root_motion_delta(file, c, 3.5f, -2.0f, &d), "skp_root_motion_delta");
        put(out, &d, sizeof d);
    }
    if (skp_clip_info(file, clips, &(SkpClipInfo){0}) != SKP_ERROR_OUT_OF_RANGE) {
        fprintf(stderr, "an out-of-range clip was not refused\n");
        return 1;
    }
    free(pose);
    skp_close(file);
    return fclose(out) == 0 ? 0 : 1;
}
