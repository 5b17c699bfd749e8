#!/bin/sh
# Fills fuzz/corpus/<target>/ from the shared assets (never copied into the repo) and
# fuzz/seeds/. Run from the repository root: `sh fuzz/seed.sh [ASSETS] [SKELPACK]`.
set -eu
assets=${1:-../shared/assets}
skelpack=${2:-target/release/skelpack}
c=fuzz/corpus
mkdir -p $c/import_gltf $c/import_bvh $c/import_acl $c/settings $c/decode_skp $c/compress $c/import_fbx
# The committed regression inputs (hostile files of issue 24, minimized campaign corpora).
for t in import_gltf import_bvh import_acl import_fbx settings decode_skp compress; do
    cp fuzz/regressions/$t/* $c/$t/
done
cp "$assets"/*.glb "$assets"/*.gltf $c/import_gltf/
# BVH: the hierarchy and the first 40 frames of each file (small inputs fuzz faster).
for f in "$assets"/*.bvh; do
    awk '/^Frames:/ { print "Frames: 40"; next } { print } /^Frame Time:/ { n = 40 } n && !/^Frame Time:/ { if (--n == 0) exit }' \
        "$f" > $c/import_bvh/$(basename "$f")
done
cp "$assets"/acl/121_10.acl.sjson "$assets"/acl/93_01_zero_range_extent.acl.sjson \
   "$assets"/acl/09_02_multi_root.acl.sjson $c/import_acl/
cp fuzz/seeds/settings/* $c/settings/
# FBX: the small files (binary and ASCII; the larger ones fuzz slowly).
for f in maya_anim_interpolation_7700_binary maya_anim_no_inherit_scale_7700_ascii \
         blender440_shape_weight_anim_7400_binary maya_anim_layers_over_acc_orders_7500_binary \
         assimp_animation_with_skeleton; do
    cp "$assets"/fbx/$f.fbx $c/import_fbx/
done
# What gltfpack writes (EXT_meshopt_compression, KHR_mesh_quantization), when tools/peers is
# installed (`npm ci` there): the extension readers in src/import/gltf_ext.rs.
pack=tools/peers/node_modules/.bin/gltfpack
if [ -x $pack ]; then
    for a in SimpleSkin.gltf RiggedSimple.glb CesiumMan.glb Fox.glb; do
        $pack -i "$assets/$a" -o $c/import_gltf/gltfpack_cc_${a%.*}.glb -cc >/dev/null
        $pack -i "$assets/$a" -o $c/import_gltf/gltfpack_q_${a%.*}.glb >/dev/null
    done
fi
for f in RiggedSimple.glb InterpolationTest.glb acl/121_10.acl.sjson; do
    "$skelpack" compress "$assets/$f" -o $c/decode_skp/$(basename "$f").skp >/dev/null
done
# The compress target: small files of every format (its input is capped at 20,000
# joint-frames, so the BVH seeds above, cut to 40 frames, and the small glTF assets).
cp $c/import_bvh/*.bvh "$assets"/SimpleSkin.gltf "$assets"/RiggedSimple.glb $c/compress/
ls $c/* | head -40
