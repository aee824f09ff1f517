// The player inside the HTML files `weft run --format html` writes (apps/html_writer.cpp): three.js
// (r111, embedded before this script) draws the frames the page carries.
//
// The page holds two blocks: #weft-meta (JSON: scene, fps, frame count, the quantization box, the
// cloth's and bodies' layout, shapes, the run's summary) and #weft-data (base64, little endian):
//   cloth triangles        uint32 × 3 per triangle
//   cloth positions        uint16 × 3 per particle per frame, (x − lo) / (hi − lo) · 65535
//   body positions         uint16 × 3 per body per frame, the same box
//   body orientations      int16 × 4 per body per frame, quaternion (x, y, z, w) · 32767
//   moving shape poses     float32 × 7 per moving shape per frame (p, q)
// Self-intersections the run recorded (frame → [edge v0, v1, triangle a, b, c]) are drawn in red
// while "intersections" is ticked. A status line (#weft-status) reports what was drawn — frames shown, the canvas's pixel variance,
// the time from opening to the first frame, errors — for the headless-browser test
// (tests/apps/html_viewer_check.cmake).
(function () {
  "use strict";
  const status = { framesShown: 0, maxFrame: 0, variance: -1, readyMs: -1, errors: [] };
  const statusElement = document.getElementById("weft-status");
  function report() {
    statusElement.textContent = "weft-status frames_shown=" + status.framesShown + " max_frame=" +
      status.maxFrame + " variance=" + status.variance.toFixed(1) + " ready_ms=" +
      status.readyMs.toFixed(0) + " errors=" +
      status.errors.length + (status.errors.length ? " first_error=" + status.errors[0] : "");
  }
  window.addEventListener("error", function (e) { status.errors.push(String(e.message)); report(); });
  const consoleError = console.error;
  console.error = function () {
    status.errors.push(Array.prototype.join.call(arguments, " "));
    report();
    consoleError.apply(console, arguments);
  };

  const meta = JSON.parse(document.getElementById("weft-meta").textContent);
  const bytes = Uint8Array.from(atob(document.getElementById("weft-data").textContent.trim()),
                                function (c) { return c.charCodeAt(0); });
  const buffer = bytes.buffer;
  const frames = meta.frames;
  const lo = meta.box.lo, extent = [meta.box.hi[0] - lo[0], meta.box.hi[1] - lo[1], meta.box.hi[2] - lo[2]];
  function dequantize(q, axis) { return lo[axis] + (q / 65535) * extent[axis]; }

  // ---- Scene, camera, lights -----------------------------------------------------------------
  const canvas = document.getElementById("weft-canvas");
  const renderer = new THREE.WebGLRenderer({ canvas: canvas, antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xf4f5f7);
  const camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
  camera.up.set(0, 0, 1);  // Weft is z-up
  scene.add(new THREE.HemisphereLight(0xffffff, 0x8a8f99, 0.75));
  const sun = new THREE.DirectionalLight(0xffffff, 0.6);
  sun.position.set(2, -3, 5);
  scene.add(sun);

  let offset = 0;
  function take(Type, count) {
    const array = new Type(buffer, offset, count);
    offset += count * Type.BYTES_PER_ELEMENT;
    return array;
  }

  // ---- Cloth -------------------------------------------------------------------------------
  let cloth = null;
  if (meta.cloth) {
    const n = meta.cloth.particles;
    const triangles = take(Uint32Array, meta.cloth.triangles * 3);
    const positions = take(Uint16Array, n * 3 * frames);
    if (offset % 4) offset += 4 - (offset % 4);
    const geometry = new THREE.BufferGeometry();
    const points = new Float32Array(n * 3);
    geometry.setAttribute("position", new THREE.BufferAttribute(points, 3));
    geometry.setIndex(new THREE.BufferAttribute(triangles, 1));
    const front = new THREE.MeshStandardMaterial({ color: 0x3d7cc9, side: THREE.FrontSide, roughness: 0.8 });
    const back = new THREE.MeshStandardMaterial({ color: 0xd9893b, side: THREE.BackSide, roughness: 0.8 });
    const group = new THREE.Group();
    group.add(new THREE.Mesh(geometry, front));
    group.add(new THREE.Mesh(geometry, back));
    scene.add(group);
    cloth = {
      show: function (f) {
        const base = f * n * 3;
        for (let i = 0; i < n * 3; ++i) points[i] = dequantize(positions[base + i], i % 3);
        geometry.attributes.position.needsUpdate = true;
        geometry.computeVertexNormals();
        geometry.computeBoundingSphere();
      },
      geometry: geometry,
      points: points
    };
  }

  // ---- Bodies: instanced cylinders and spheres per capsule radius, boxes and spheres ---------
  let bodies = null;
  if (meta.bodies) {
    const n = meta.bodies.count;
    const bodyPositions = take(Uint16Array, n * 3 * frames);
    if (offset % 2) offset += 1;
    const bodyOrientations = take(Int16Array, n * 4 * frames);
    const material = new THREE.MeshStandardMaterial({ color: 0x4a9b6f, roughness: 0.6 });
    const batches = new Map();  // one instanced mesh per geometry: {geometry, items: [{body, local}]}
    function batch(key, makeGeometry) {
      if (!batches.has(key)) batches.set(key, { geometry: makeGeometry(), items: [] });
      return batches.get(key);
    }
    const shapes = meta.bodies.shapes;  // [body, type, radius, halfHeight, hx, hy, hz, p(3), q(4)]
    for (let s = 0; s < shapes.length; ++s) {
      const d = shapes[s];
      const local = new THREE.Matrix4().compose(new THREE.Vector3(d[7], d[8], d[9]),
        new THREE.Quaternion(d[10], d[11], d[12], d[13]), new THREE.Vector3(1, 1, 1));
      if (d[1] === "capsule") {
        const r = d[2], h = d[3];
        const cyl = batch("cyl" + r, function () { return new THREE.CylinderBufferGeometry(r, r, 1, 12, 1, true).rotateX(Math.PI / 2); });
        cyl.items.push({ body: d[0], local: local.clone().multiply(new THREE.Matrix4().makeScale(1, 1, 2 * h)) });
        const cap = batch("sph" + r, function () { return new THREE.SphereBufferGeometry(r, 10, 6); });
        cap.items.push({ body: d[0], local: local.clone().multiply(new THREE.Matrix4().makeTranslation(0, 0, h)) });
        cap.items.push({ body: d[0], local: local.clone().multiply(new THREE.Matrix4().makeTranslation(0, 0, -h)) });
      } else if (d[1] === "sphere") {
        batch("sph" + d[2], function () { return new THREE.SphereBufferGeometry(d[2], 16, 12); }).items.push({ body: d[0], local: local });
      } else if (d[1] === "box") {
        batch("box" + [d[4], d[5], d[6]], function () { return new THREE.BoxBufferGeometry(2 * d[4], 2 * d[5], 2 * d[6]); })
          .items.push({ body: d[0], local: local });
      }
    }
    const meshes = Array.from(batches.values()).map(function (b) {
      b.mesh = new THREE.InstancedMesh(b.geometry, material, b.items.length);
      scene.add(b.mesh);
      return b;
    });
    const world = new THREE.Matrix4(), m = new THREE.Matrix4();
    const p = new THREE.Vector3(), q = new THREE.Quaternion(), one = new THREE.Vector3(1, 1, 1);
    bodies = {
      show: function (f) {
        for (const b of meshes) {
          for (let i = 0; i < b.items.length; ++i) {
            const body = b.items[i].body, k = (f * n + body);
            p.set(dequantize(bodyPositions[3 * k], 0), dequantize(bodyPositions[3 * k + 1], 1),
                  dequantize(bodyPositions[3 * k + 2], 2));
            q.set(bodyOrientations[4 * k] / 32767, bodyOrientations[4 * k + 1] / 32767,
                  bodyOrientations[4 * k + 2] / 32767, bodyOrientations[4 * k + 3] / 32767).normalize();
            world.compose(p, q, one);
            m.multiplyMatrices(world, b.items[i].local);
            b.mesh.setMatrixAt(i, m);
          }
          b.mesh.instanceMatrix.needsUpdate = true;
        }
      }
    };
  }

  // ---- Shapes: static and moving, and the ground ---------------------------------------------
  if (offset % 4) offset += 4 - (offset % 4);
  const shapeMaterial = new THREE.MeshStandardMaterial({ color: 0x9aa0a8, roughness: 0.9, transparent: true, opacity: 0.85 });
  const moving = [];
  for (const s of meta.shapes) {
    let mesh = null;
    if (s.type === "plane") {
      const grid = new THREE.GridHelper(meta.box.span * 4, 40, 0xb8bcc4, 0xd4d7dd);
      grid.rotation.x = Math.PI / 2;
      mesh = new THREE.Group();
      mesh.add(grid);
    } else if (s.type === "sphere") {
      mesh = new THREE.Mesh(new THREE.SphereBufferGeometry(s.radius, 32, 24), shapeMaterial);
    } else if (s.type === "box") {
      mesh = new THREE.Mesh(new THREE.BoxBufferGeometry(2 * s.half[0], 2 * s.half[1], 2 * s.half[2]), shapeMaterial);
    } else if (s.type === "capsule") {
      mesh = new THREE.Group();
      mesh.add(new THREE.Mesh(new THREE.CylinderBufferGeometry(s.radius, s.radius, 2 * s.halfHeight, 24, 1, true).rotateX(Math.PI / 2), shapeMaterial));
      for (const z of [-s.halfHeight, s.halfHeight]) {
        const cap = new THREE.Mesh(new THREE.SphereBufferGeometry(s.radius, 24, 16), shapeMaterial);
        cap.position.z = z;
        mesh.add(cap);
      }
    }
    mesh.position.set(s.pose[0], s.pose[1], s.pose[2]);
    mesh.quaternion.set(s.pose[3], s.pose[4], s.pose[5], s.pose[6]);
    scene.add(mesh);
    if (s.moving) moving.push(mesh);
  }
  const shapePoses = moving.length ? take(Float32Array, moving.length * 7 * frames) : null;
  function showShapes(f) {
    for (let i = 0; i < moving.length; ++i) {
      const k = (f * moving.length + i) * 7;
      moving[i].position.set(shapePoses[k], shapePoses[k + 1], shapePoses[k + 2]);
      moving[i].quaternion.set(shapePoses[k + 3], shapePoses[k + 4], shapePoses[k + 5], shapePoses[k + 6]);
    }
  }

  // ---- Self-intersections the run recorded: the edge (red line) and the triangle it crosses ----
  const pairs = meta.intersectingPairs || {};
  const pairsToggle = document.getElementById("weft-pairs");
  let pairMarks = null;
  if (cloth && Object.keys(pairs).length) {
    document.getElementById("weft-pairs-toggle").hidden = false;
    const lineGeometry = new THREE.BufferGeometry(), faceGeometry = new THREE.BufferGeometry();
    pairMarks = new THREE.Group();
    pairMarks.add(new THREE.LineSegments(lineGeometry, new THREE.LineBasicMaterial({ color: 0xe02020, depthTest: false })));
    pairMarks.add(new THREE.Mesh(faceGeometry, new THREE.MeshBasicMaterial({ color: 0xff4040, side: THREE.DoubleSide, transparent: true, opacity: 0.6, depthTest: false })));
    scene.add(pairMarks);
    pairMarks.showFrame = function (f) {
      const rows = pairsToggle.checked ? (pairs[String(f)] || []) : [];
      const p = cloth.points, line = new Float32Array(rows.length * 6), face = new Float32Array(rows.length * 9);
      rows.forEach(function (r, i) {
        for (let a = 0; a < 3; ++a) {
          line[6 * i + a] = p[3 * r[0] + a];
          line[6 * i + 3 + a] = p[3 * r[1] + a];
          for (let c = 0; c < 3; ++c) face[9 * i + 3 * c + a] = p[3 * r[2 + c] + a];
        }
      });
      lineGeometry.setAttribute("position", new THREE.BufferAttribute(line, 3));
      faceGeometry.setAttribute("position", new THREE.BufferAttribute(face, 3));
    };
    pairsToggle.addEventListener("change", function () { show(frame); });
  }

  // ---- Camera: orbit (drag), pan (right drag or shift), zoom (wheel) ------------------------
  const target = new THREE.Vector3((lo[0] + meta.box.hi[0]) / 2, (lo[1] + meta.box.hi[1]) / 2, (lo[2] + meta.box.hi[2]) / 2);
  const orbit = { azimuth: -Math.PI / 3, elevation: 0.45, distance: 1.9 * meta.box.span + 0.1 };
  function placeCamera() {
    const c = Math.cos(orbit.elevation);
    camera.position.set(target.x + orbit.distance * c * Math.cos(orbit.azimuth),
                        target.y + orbit.distance * c * Math.sin(orbit.azimuth),
                        target.z + orbit.distance * Math.sin(orbit.elevation));
    camera.lookAt(target);
  }
  let drag = null;
  canvas.addEventListener("pointerdown", function (e) { drag = { x: e.clientX, y: e.clientY, pan: e.button !== 0 || e.shiftKey }; canvas.setPointerCapture(e.pointerId); });
  canvas.addEventListener("pointerup", function () { drag = null; });
  canvas.addEventListener("contextmenu", function (e) { e.preventDefault(); });
  canvas.addEventListener("pointermove", function (e) {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    drag.x = e.clientX;
    drag.y = e.clientY;
    if (drag.pan) {
      const right = new THREE.Vector3().setFromMatrixColumn(camera.matrix, 0);
      const up = new THREE.Vector3().setFromMatrixColumn(camera.matrix, 1);
      const k = orbit.distance / canvas.clientHeight;
      target.addScaledVector(right, -dx * k).addScaledVector(up, dy * k);
    } else {
      orbit.azimuth -= dx * 0.008;
      orbit.elevation = Math.max(-1.5, Math.min(1.5, orbit.elevation + dy * 0.008));
    }
    placeCamera();
    draw();
  });
  canvas.addEventListener("wheel", function (e) {
    e.preventDefault();
    orbit.distance *= Math.exp(e.deltaY * 0.001);
    placeCamera();
    draw();
  }, { passive: false });

  // ---- Player ----------------------------------------------------------------------------------
  const slider = document.getElementById("weft-frame");
  const playButton = document.getElementById("weft-play");
  const speedSelect = document.getElementById("weft-speed");
  const overlay = document.getElementById("weft-overlay");
  slider.max = frames - 1;
  let frame = 0, playing = true, clock = 0, last = null;
  function describeFrame(f) {
    const lines = [meta.scene + "  frame " + f + " / " + (frames - 1) + "  t = " + (f / meta.fps).toFixed(3) + " s"];
    if (meta.summary.checks) lines.push("run: " + meta.summary.checks);
    if (meta.frameMs && f > 0 && f - 1 < meta.frameMs.length) lines.push("frame time " + meta.frameMs[f - 1].toFixed(3) + " ms (" + meta.summary.device + ")");
    if (meta.intersections && f > 0 && f - 1 < meta.intersections.length) lines.push("self-intersections " + meta.intersections[f - 1]);
    if (pairs[String(f)]) lines.push(pairs[String(f)].length + " intersecting edge-triangle pairs recorded here");
    return lines.join("\n");
  }
  function show(f) {
    frame = f;
    if (cloth) cloth.show(f);
    if (bodies) bodies.show(f);
    if (moving.length) showShapes(f);
    if (pairMarks) pairMarks.showFrame(f);
    slider.value = f;
    overlay.textContent = describeFrame(f);
    draw();
    status.framesShown += 1;
    status.maxFrame = Math.max(status.maxFrame, f);
  }
  function resize() {
    const w = canvas.clientWidth, h = canvas.clientHeight;
    renderer.setSize(w, h, false);
    camera.aspect = w / Math.max(h, 1);
    camera.updateProjectionMatrix();
  }
  function draw() {
    resize();
    renderer.render(scene, camera);
  }
  function measure() {  // the canvas's luminance variance: a blank page has none
    const gl = renderer.getContext();
    const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    const pixels = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    let sum = 0, sum2 = 0, count = 0;
    for (let i = 0; i < pixels.length; i += 16) {
      const y = 0.299 * pixels[i] + 0.587 * pixels[i + 1] + 0.114 * pixels[i + 2];
      sum += y;
      sum2 += y * y;
      ++count;
    }
    status.variance = sum2 / count - (sum / count) * (sum / count);
    report();
  }
  function tick(now) {
    if (last !== null && playing) {
      clock += (now - last) / 1000 * Number(speedSelect.value) * meta.fps;
      if (clock >= 1) {
        const step = Math.floor(clock);
        clock -= step;
        show((frame + step) % frames);
        report();
      }
    }
    last = now;
  }
  // Timers rather than requestAnimationFrame: they also run in a headless browser's virtual time,
  // where animation frames come only as fast as software rendering allows.
  function loop() {
    tick(performance.now());
    setTimeout(loop, 1000 / 60);
  }
  slider.addEventListener("input", function () { show(Number(slider.value)); });
  playButton.addEventListener("click", function () {
    playing = !playing;
    playButton.textContent = playing ? "pause" : "play";
  });
  document.getElementById("weft-export").addEventListener("click", function () {
    draw();
    const link = document.createElement("a");
    link.download = meta.scene + "_frame" + frame + ".png";
    link.href = canvas.toDataURL("image/png");
    link.click();
  });
  const summary = document.getElementById("weft-summary");
  summary.textContent = meta.summary.text;
  window.addEventListener("resize", draw);
  // A link may name a frame to open at, paused: page.html#frame=12 or #frame=last.
  const asked = /frame=(last|\d+)/.exec(window.location.hash);
  placeCamera();
  if (asked) {
    playing = false;
    playButton.textContent = "play";
    show(asked[1] === "last" ? frames - 1 : Math.min(Number(asked[1]), frames - 1));
  } else {
    show(0);
  }
  status.readyMs = performance.now();  // page opened to first frame drawn
  measure();
  loop();
})();
